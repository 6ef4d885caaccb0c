"""The web inspector in a real browser (Debian's chromium, headless, driven by Playwright):
the runs list, a run waiting for approval approved with a note and watched to completion,
time travel, an unknown outcome settled; model and tool text shown as text, never markup.

Screenshots of each step go to `$EUDAIMON_TEST_ARTIFACTS`, else `tests/server/artifacts/` (ignored by git).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from _server_support import KEYS, OPERATOR, Server, wait_until
from playwright.sync_api import Browser, Page, expect
from test_decisions_over_http import _stranded_charge

ARTIFACTS = Path(os.environ.get("EUDAIMON_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts")


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("inspector") / "runs.db", env={"EUDAIMON_API_KEYS": KEYS}).start()
    yield running
    running.stop()


@pytest.fixture
def page(browser: Browser, inspector: Server) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    opened = context.new_page()
    opened.goto(inspector.url + "/")
    opened.get_by_label("API key").fill(OPERATOR)
    opened.get_by_role("button", name="Use").click()
    yield opened
    context.close()


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def _start(server: Server, agent: str, text: str, *, wait: bool = False) -> str:
    """A run of its own thread (memory brings no earlier turns into it)."""
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}) as client:
        body = {"input": text, "thread_id": f"browser-{uuid.uuid4().hex[:8]}"}
        answer = client.post(f"/v1/agents/{agent}/runs", params={"wait": wait}, json=body)
        assert answer.status_code in (200, 202), answer.text
        return str(answer.json()["run_id"])


def test_approve_with_a_note_and_watch_the_run_complete(page: Page, inspector: Server) -> None:
    """Invariant: the runs list shows and filters runs; a run waiting for approval shows the tool
    and its arguments; Approve with a note completes it live, and the page shows who decided."""
    done_id = _start(inspector, "ticker", "ticks=2", wait=True)
    waiting_id = _start(inspector, "payer", "pay 250 to ACME-Corp")
    rows = page.get_by_test_id("runs")
    expect(rows.locator(f'[data-run="{waiting_id}"]')).to_be_visible()
    expect(rows.locator(f'[data-run="{done_id}"]')).to_be_visible()
    shot(page, "01-runs-list")
    page.get_by_test_id("status-filter").select_option("awaiting_approval")
    expect(rows.locator(f'[data-run="{done_id}"]')).to_have_count(0)
    expect(rows.locator(f'[data-run="{waiting_id}"]')).to_be_visible()
    shot(page, "02-runs-awaiting-approval")

    rows.locator(f'[data-run="{waiting_id}"] a').first.click()
    approval = page.get_by_test_id("pending-approval")
    expect(approval).to_contain_text("send_wire")
    expect(approval.get_by_test_id("arguments")).to_contain_text('"to": "ACME-Corp"')
    shot(page, "03-run-awaiting-approval")

    approval.get_by_test_id("approval-note").fill("invoice 2291, checked by finance")
    approval.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    expect(page.get_by_test_id("conversation")).to_contain_text("Done: sent $250.00 to ACME-Corp.")
    decision = page.get_by_test_id("decision")
    expect(decision).to_contain_text("approved")
    expect(decision.get_by_test_id("decided-by")).to_have_text("alice")
    expect(decision).to_contain_text("invoice 2291, checked by finance")
    expect(page.get_by_test_id("event").last).to_contain_text("run_completed")
    shot(page, "04-run-completed-live")


def test_the_time_travel_slider_shows_the_state_at_that_event(page: Page, inspector: Server) -> None:
    """Invariant: moving the slider to event N shows the state folded up to N (status, messages)."""
    run_id = _start(inspector, "payer", "pay 7 to SAM")
    page.goto(f"{inspector.url}/runs/{run_id}")
    expect(page.get_by_test_id("event")).to_have_count(5)
    slider = page.get_by_test_id("travel")
    slider.evaluate("(s) => { s.value = '0'; s.dispatchEvent(new Event('input')); }")
    label = page.get_by_test_id("travel-label")
    expect(label).to_contain_text("State after event 0 (run_queued)")  # journaled when the start was accepted
    expect(label.get_by_test_id("status")).to_have_text("queued")
    expect(page.get_by_test_id("travel-state").get_by_test_id("message")).to_have_count(0)
    slider.evaluate("(s) => { s.value = '1'; s.dispatchEvent(new Event('input')); }")
    expect(label).to_contain_text("State after event 1 (run_started)")
    expect(label.get_by_test_id("status")).to_have_text("running")
    expect(page.get_by_test_id("travel-state").get_by_test_id("message")).to_have_count(1)
    slider.evaluate("(s) => { s.value = '4'; s.dispatchEvent(new Event('input')); }")
    expect(label).to_contain_text("State after event 4 (approval_requested)")
    expect(label.get_by_test_id("status")).to_have_text("awaiting_approval")
    expect(label).to_contain_text("waiting: send_wire")
    expect(page.get_by_test_id("travel-state").get_by_test_id("message")).to_have_count(2)
    shot(page, "05-time-travel")


def test_settle_an_unknown_outcome(page: Page, inspector: Server) -> None:
    """Invariant: a call whose outcome is unknown (its server died mid-call) shows a form; settling
    it with the output it had completes the run, and the decision names the operator."""
    # Playwright's sync API runs an event loop on this thread: the journal work gets a thread of its own.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run_id = pool.submit(asyncio.run, _stranded_charge(inspector.db)).result()
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}) as client:
        wait_until(
            lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_reconciliation",
            "the recovery sweep to mark the outcome unknown",
        )
    page.goto(f"{inspector.url}/runs/{run_id}")
    unknown = page.get_by_test_id("unknown-outcome")
    expect(unknown).to_contain_text("charge_card")
    unknown.get_by_test_id("reconcile-output").fill("charged $42.00 per the bank statement")
    shot(page, "06-unknown-outcome")
    unknown.get_by_role("button", name="Settle with this output").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    expect(page.get_by_test_id("conversation")).to_contain_text("charged $42.00 per the bank statement")
    expect(page.get_by_test_id("decision").get_by_test_id("decided-by")).to_have_text("alice")
    shot(page, "07-unknown-outcome-settled")


def test_model_and_tool_text_is_shown_as_text(page: Page, inspector: Server) -> None:
    """Invariant: markup in a run's input (it reaches the model, the tools and the page) is shown
    literally: no element is made from it and no script of it runs."""
    hostile = "<img src=x onerror=\"document.title='pwned'\"> to <b>BOLD</b>"
    run_id = _start(inspector, "payer", f"pay 1 to {hostile}")
    page.goto(f"{inspector.url}/runs/{run_id}")
    conversation = page.get_by_test_id("conversation")
    expect(conversation).to_contain_text("<img src=x")
    expect(conversation.locator("img, b")).to_have_count(0)
    assert page.title() != "pwned"
