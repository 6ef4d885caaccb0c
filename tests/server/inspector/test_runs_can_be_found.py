"""The runs list: search, filters, the columns that say what a run was, and pages that keep
their place across back, forward and reload."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

from _inspector_support import start_run
from _server_support import Server
from playwright.sync_api import Page, expect


def test_search_finds_a_run_by_its_input_and_the_url_keeps_it(page: Page, inspector: Server, shot) -> None:
    """Invariant: the search box finds runs by text in their input; the URL holds the search, so
    a reload shows the same result."""
    word = "ZEBRA" + uuid.uuid4().hex[:6].upper()
    found = str(start_run(inspector, "payer", f"pay 11 to {word}")["run_id"])
    other = str(start_run(inspector, "payer", "pay 12 to SOMEONE-ELSE")["run_id"])
    page.goto(inspector.url + "/")
    rows = page.get_by_test_id("runs")
    expect(rows.locator(f'[data-run="{other}"]')).to_be_visible()
    page.get_by_test_id("run-search").fill(word.lower())
    page.get_by_test_id("run-search").press("Enter")
    expect(rows.locator(f'[data-run="{other}"]')).to_have_count(0)
    expect(rows.locator("[data-run]")).to_have_count(1)
    expect(rows.locator(f'[data-run="{found}"] [data-testid=input-preview]')).to_contain_text(f"pay 11 to {word}")
    assert f"q={word.lower()}" in page.url
    shot(page, "searched")
    page.reload()
    expect(page.get_by_test_id("run-search")).to_have_value(word.lower())
    expect(rows.locator("[data-run]")).to_have_count(1)


def test_filters_by_agent_and_status_and_back_undoes_them(page: Page, inspector: Server) -> None:
    """Invariant: the agent and status filters narrow the list and show in the URL; back returns
    to the list before the filter, forward to the filtered one."""
    done = str(start_run(inspector, "ticker", "ticks=1", wait=True)["run_id"])
    waiting = str(start_run(inspector, "payer", "pay 13 to FILTER-ME")["run_id"])
    page.goto(inspector.url + "/")
    rows = page.get_by_test_id("runs")
    expect(rows.locator(f'[data-run="{done}"]')).to_be_visible()
    page.get_by_test_id("status-filter").select_option("awaiting_approval")
    expect(rows.locator(f'[data-run="{done}"]')).to_have_count(0)
    expect(rows.locator(f'[data-run="{waiting}"]')).to_be_visible()
    assert "status=awaiting_approval" in page.url
    page.go_back()
    expect(page.get_by_test_id("status-filter")).to_have_value("")
    expect(rows.locator(f'[data-run="{done}"]')).to_be_visible()
    page.go_forward()
    expect(page.get_by_test_id("status-filter")).to_have_value("awaiting_approval")
    expect(rows.locator(f'[data-run="{done}"]')).to_have_count(0)
    page.get_by_test_id("status-filter").select_option("")
    page.get_by_test_id("agent-filter").fill("ticker")
    page.get_by_test_id("agent-filter").press("Enter")
    expect(rows.locator(f'[data-run="{waiting}"]')).to_have_count(0)
    expect(rows.locator(f'[data-run="{done}"]')).to_be_visible()
    assert "agent=ticker" in page.url


def test_the_columns_show_input_outcome_cost_and_duration(page: Page, inspector: Server) -> None:
    """Invariant: a finished run's row shows the start of its input, its output, its cost and its
    duration; a run that has not ended shows no duration."""
    done = str(start_run(inspector, "ticker", "ticks=2 columns", wait=True)["run_id"])
    waiting = str(start_run(inspector, "payer", "pay 14 to COLUMNS")["run_id"])
    page.goto(inspector.url + "/?q=columns")
    row = page.locator(f'[data-testid=runs] [data-run="{done}"]')
    expect(row.get_by_test_id("input-preview")).to_have_text("ticks=2 columns")
    expect(row.get_by_test_id("outcome")).to_contain_text("Ticked 2 times.")
    expect(row.get_by_test_id("duration")).to_have_text(re.compile(r"^\d+(\.\d)? m?s$"))
    expect(row.get_by_test_id("cost")).to_be_visible()
    expect(page.locator(f'[data-testid=runs] [data-run="{waiting}"] [data-testid=duration]')).to_have_text("—")


def test_pages_keep_their_place_across_reload_and_back(page: Page, inspector: Server) -> None:
    """Invariant: the next page is a URL of its own (its cursor): a reload stays on it, back
    returns to the first page, forward to the second."""
    word = "PAGED" + uuid.uuid4().hex[:6].upper()
    ids = [str(start_run(inspector, "payer", f"pay {n} to {word}")["run_id"]) for n in range(5)]
    page.goto(f"{inspector.url}/?q={word}&limit=2")
    rows = page.get_by_test_id("runs").locator("[data-run]")
    expect(rows).to_have_count(2)
    first = rows.evaluate_all("(rs) => rs.map((r) => r.dataset.run)")
    page.get_by_test_id("next-page").click()
    expect(page).to_have_url(re.compile("cursor="))
    expect(rows.first).not_to_have_attribute("data-run", first[0])
    second = rows.evaluate_all("(rs) => rs.map((r) => r.dataset.run)")
    assert not set(first) & set(second) and set(first) | set(second) <= set(ids)
    page.reload()
    expect(rows).to_have_count(2)
    assert rows.evaluate_all("(rs) => rs.map((r) => r.dataset.run)") == second
    page.go_back()
    expect(rows.first).to_have_attribute("data-run", first[0])
    page.go_forward()
    expect(rows.first).to_have_attribute("data-run", second[0])


def test_filters_by_thread_and_day(page: Page, inspector: Server) -> None:
    """Invariant: the thread filter shows that thread's runs alone; a day range that ends before
    today shows none of today's runs, one that starts today shows them."""
    run = start_run(inspector, "payer", "pay 15 to THREADED")
    run_id, thread = str(run["run_id"]), str(run["thread_id"])
    other = str(start_run(inspector, "payer", "pay 16 to ELSEWHERE")["run_id"])
    page.goto(inspector.url + "/")
    rows = page.get_by_test_id("runs")
    page.get_by_test_id("thread-filter").fill(thread)
    page.get_by_test_id("thread-filter").press("Enter")
    expect(rows.locator("[data-run]")).to_have_count(1)
    expect(rows.locator(f'[data-run="{run_id}"]')).to_be_visible()
    assert f"thread_id={thread}" in page.url
    today = datetime.now(UTC).date()
    page.goto(f"{inspector.url}/?until={today - timedelta(days=1)}")
    expect(page.get_by_test_id("until-filter")).to_have_value(str(today - timedelta(days=1)))
    expect(rows).to_contain_text("No runs match.")
    page.get_by_test_id("until-filter").fill("")
    page.get_by_test_id("since-filter").fill(str(today))
    expect(page).to_have_url(re.compile(f"since={today}"))
    expect(rows.locator(f'[data-run="{other}"]')).to_be_visible()
    assert "until=" not in page.url


def test_a_run_started_while_the_list_is_open_shows_up_without_a_reload(page: Page, inspector: Server) -> None:
    """Invariant: the runs list reloads itself (`reloadEvery` in shared.js, every 2 s): a run
    started after the page opened appears in it, in the same document, with no reload."""
    page.goto(inspector.url + "/")
    rows = page.get_by_test_id("runs")
    expect(rows.locator("tr").first).to_be_visible()
    page.evaluate("window.sameDocument = true")
    started = str(start_run(inspector, "payer", "pay 15 to LATECOMER")["run_id"])
    expect(rows.locator(f'[data-run="{started}"]')).to_be_visible(timeout=10_000)
    assert page.evaluate("window.sameDocument === true")
