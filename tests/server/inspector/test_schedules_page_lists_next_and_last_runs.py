"""The inspector's schedules page lists each schedule with its next and last runs (the last one a
link to the run it started), and the webhook deliveries (none here: this server sends none)."""

from __future__ import annotations

import re

import httpx2
from _inspector_support import open_page
from _server_support import OPERATOR, VIEWER, Server, wait_until
from playwright.sync_api import Browser, Page, expect


def test_schedules_page_shows_next_and_last_runs(page: Page, inspector: Server, shot) -> None:
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "every-second", "cron": "* * * * * *"}
        assert client.post("/v1/schedules", json=body).status_code == 201
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "weekdays", "cron": "0 9 * * 1-5"}
        assert client.post("/v1/schedules", json={**body, "timezone": "Europe/Paris"}).status_code == 201

        def fired() -> bool:
            shown = client.get("/v1/schedules").json()["schedules"]
            return any(s["id"] == "every-second" and s["last_run_id"] for s in shown)

        wait_until(fired, "the per-second schedule to fire", tries=400)
        assert client.post("/v1/schedules/every-second/pause", json={"paused": True}).status_code == 200
    page.goto(inspector.url + "/schedules")
    table = page.get_by_test_id("schedules")
    expect(table.locator("[data-schedule]")).to_have_count(2)
    weekdays = table.locator("[data-schedule=weekdays]")
    expect(weekdays).to_contain_text("0 9 * * 1-5")
    expect(weekdays).to_contain_text("Europe/Paris")
    expect(weekdays.get_by_test_id("next-run")).not_to_have_text("—")
    every = table.locator("[data-schedule=every-second]")
    expect(every).to_contain_text("paused")
    expect(every.get_by_test_id("last-run").locator("a")).to_have_attribute(
        "href", re.compile(r"/runs/sched-every-second-\d+$")
    )
    expect(page.get_by_test_id("webhook-deliveries")).to_contain_text("sends no webhooks")
    shot(page, "schedules")
    every.get_by_test_id("last-run").locator("a").click()
    expect(page).to_have_url(re.compile(r".*/runs/sched-every-second-\d+$"))


def test_a_viewer_is_told_schedules_are_for_operators(browser: Browser, inspector: Server) -> None:
    page = open_page(browser, inspector, VIEWER, "/schedules")
    try:
        expect(page.get_by_test_id("schedules")).to_contain_text("operators only")
        expect(page.get_by_test_id("webhook-deliveries")).to_contain_text("operators only")
    finally:
        page.context.close()


def test_an_operator_pauses_resumes_and_removes_a_schedule_from_the_page(page: Page, inspector: Server) -> None:
    """Invariant: the page's buttons change the schedule the store keeps (what `GET /v1/schedules`
    answers), and a removal happens only once it is confirmed."""
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "nightly", "cron": "0 2 * * *"}
        assert client.post("/v1/schedules", json=body).status_code == 201

        def kept() -> dict[str, object] | None:
            return next((s for s in client.get("/v1/schedules").json()["schedules"] if s["id"] == "nightly"), None)

        page.goto(inspector.url + "/schedules")
        row = page.get_by_test_id("schedules").locator("[data-schedule=nightly]")
        row.get_by_test_id("pause").click()
        expect(row.get_by_test_id("state")).to_have_text("paused")
        assert (kept() or {})["paused"] is True
        row.get_by_test_id("resume").click()
        expect(row.get_by_test_id("state")).to_have_text("active")
        assert (kept() or {})["paused"] is False

        row.get_by_test_id("remove").click()
        dialog = page.get_by_test_id("remove-confirm")
        expect(dialog).to_contain_text("Remove schedule nightly?")
        dialog.get_by_test_id("remove-cancel").click()
        expect(dialog).to_be_hidden()
        assert kept() is not None
        row.get_by_test_id("remove").click()
        dialog.get_by_test_id("remove-confirmed").click()
        expect(row).to_have_count(0)
        assert kept() is None


def test_the_page_shows_a_schedule_changed_elsewhere_without_a_reload(page: Page, inspector: Server) -> None:
    """Invariant: a page left open follows the store (a schedule paused by the CLI or the API reads
    paused there within a few seconds), so an operator never acts on what has changed."""
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "hourly", "cron": "0 * * * *"}
        assert client.post("/v1/schedules", json=body).status_code == 201
        page.goto(inspector.url + "/schedules")
        state = page.get_by_test_id("schedules").locator("[data-schedule=hourly]").get_by_test_id("state")
        expect(state).to_have_text("active")
        assert client.post("/v1/schedules/hourly/pause", json={"paused": True}).status_code == 200
        expect(state).to_have_text("paused", timeout=15_000)
