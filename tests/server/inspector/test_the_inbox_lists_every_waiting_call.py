"""`/inbox` in a real Chromium: every call waiting for a person, across runs and agents, oldest
first, its deadline counting down, its arguments as the tool will get them, and only the actions
the key's role allows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _inspector_support import open_page, start_run
from _server_support import KEYS, OPERATOR, VIEWER, Server, wait_until
from playwright.sync_api import APIResponse, Browser, Route, expect


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with `_server_agents`' payer (no deadline) and `_timed_agents`' slowpay (10 min)."""
    db = tmp_path_factory.mktemp("inbox") / "runs.db"
    env = {"EUDAIMON_API_KEYS": KEYS, "EUDAIMON_TEST_APPROVAL_S": "600"}
    server = Server(db, env=env, args=("--agent", "_timed_agents:slowpay")).start()
    yield server
    server.stop()


def test_the_inbox_shows_waiting_calls_oldest_first_with_a_countdown(browser: Browser, timed: Server, shot) -> None:  # type: ignore[no-untyped-def]
    """Invariant: two runs of two agents waiting for approval are two rows, oldest first; the one
    with a deadline counts down (minutes left) and says the call is denied then; the other says
    no deadline; arguments are shown; an operator denies from the inbox and the row goes."""
    first = start_run(timed, "payer", "pay 61 to ACME")["run_id"]
    wait_until(lambda: _status(timed, first) == "awaiting_approval", "the payer to wait")
    second = start_run(timed, "slowpay", "pay ACME")["run_id"]
    wait_until(lambda: _status(timed, second) == "awaiting_approval", "slowpay to wait")
    page = open_page(browser, timed, OPERATOR, "/inbox")
    try:
        rows = page.locator("[data-testid=inbox] [data-testid=inbox-item]")
        expect(rows).to_have_count(2)
        assert [rows.nth(i).get_attribute("data-run") for i in range(2)] == [first, second]
        expect(rows.nth(0).get_by_test_id("no-deadline")).to_be_visible()
        countdown = rows.nth(1).get_by_test_id("countdown")
        expect(countdown).to_contain_text("min")
        expect(rows.nth(1).get_by_test_id("deadline")).to_contain_text("then the call is denied")
        expect(rows.nth(1).get_by_test_id("inbox-arguments")).to_contain_text("ACME")
        before = countdown.text_content()
        page.wait_for_timeout(1500)
        assert countdown.text_content() != before  # it counts down
        shot(page, "inbox")

        rows.nth(1).get_by_test_id("inbox-deny").click()

        expect(rows).to_have_count(1)
        wait_until(lambda: _status(timed, second) == "completed", "the denied run to go on")
    finally:
        page.context.close()


def test_a_viewer_sees_the_inbox_without_actions(browser: Browser, timed: Server) -> None:
    """Invariant: a viewer's inbox lists the same calls with no approve or deny button."""
    start_run(timed, "payer", "pay 5 to ACME")
    page = open_page(browser, timed, VIEWER, "/inbox")
    try:
        rows = page.locator("[data-testid=inbox] [data-testid=inbox-item]")
        expect(rows.first).to_be_visible()
        expect(page.get_by_test_id("inbox-approve")).to_have_count(0)
        expect(page.get_by_test_id("inbox-deny")).to_have_count(0)
        expect(rows.first).to_contain_text("view only")
    finally:
        page.context.close()


def test_an_older_answer_never_brings_back_a_call_just_decided(browser: Browser, timed: Server) -> None:
    """Invariant: the inbox shows the answer to its latest load only. A refresh still on its way
    (held here, as a slow store would) when the operator approves must not put the approved call
    back once it lands after the reload the approval made."""
    run = start_run(timed, "payer", "pay 62 to ACME")["run_id"]
    wait_until(lambda: _status(timed, run) == "awaiting_approval", "the payer to wait")
    page = open_page(browser, timed, OPERATOR, "/inbox")
    held: list[tuple[Route, APIResponse]] = []

    def hold_the_next_refresh(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))  # answered by the server now, shown only later

    try:
        row = page.locator(f"[data-testid=inbox-item][data-run='{run}']")
        expect(row).to_have_count(1)
        page.route("**/v1/inbox", hold_the_next_refresh)
        for _ in range(100):  # the page refreshes itself every 5 s
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the inbox did not refresh itself within 10 s"

        row.get_by_test_id("inbox-approve").click()  # send_wire cannot be undone: asked twice
        row.get_by_test_id("inbox-approve").click()
        expect(row).to_have_count(0)
        route, stale = held[0]
        with page.expect_response("**/v1/inbox"):
            route.fulfill(response=stale)  # the refresh asked before the approval lands last
        page.wait_for_timeout(300)  # the page reads and draws it (the next refresh is 5 s away)

        assert row.count() == 0  # read once: `expect` would wait for the next refresh to mend it
        wait_until(lambda: _status(timed, run) == "completed", "the approved run to go on")
    finally:
        page.context.close()


def _status(server: Server, run_id: str) -> str:
    with server.client(OPERATOR) as client:
        return str(client.get(f"/v1/runs/{run_id}").json()["status"])


def test_an_irreversible_call_is_approved_from_the_inbox_only_by_asking_twice(browser: Browser, timed: Server) -> None:
    """Invariant: one click in a list never sends money. The inbox says the call is irreversible
    and why it waits; the first Approve only asks to confirm (a refresh keeps the question), the
    second approves; a confirmation not given lapses and the call still waits."""
    run = start_run(timed, "payer", "pay 63 to ACME")["run_id"]
    wait_until(lambda: _status(timed, run) == "awaiting_approval", "the payer to wait")
    page = open_page(browser, timed, OPERATOR, "/inbox")
    try:
        row = page.locator(f"[data-testid=inbox-item][data-run='{run}']")
        expect(row.get_by_test_id("inbox-effect")).to_have_text("irreversible")
        expect(row.get_by_test_id("inbox-reason")).not_to_be_empty()
        approve = row.get_by_test_id("inbox-approve")
        expect(approve).to_have_text("Approve…")
        approve.click()
        expect(approve).to_have_text("Confirm: this cannot be undone")
        page.wait_for_timeout(5500)  # a refresh (every 5 s) draws the row again, still asking
        expect(approve).to_have_attribute("data-armed", "true")
        assert _status(timed, run) == "awaiting_approval"  # the first click decided nothing
        page.wait_for_timeout(5000)  # the question lapses after 10 s
        expect(approve).to_have_text("Approve…")
        approve.click()
        approve.click()
        expect(row).to_have_count(0)
        wait_until(lambda: _status(timed, run) == "completed", "the approved run to go on")
    finally:
        page.context.close()


def test_a_call_hiding_characters_is_not_approved_from_the_inbox(browser: Browser, timed: Server) -> None:
    """Invariant: what an approver reads is what the tool gets: a call whose arguments hold an
    invisible or direction-changing character has no Approve in the inbox, only a warning and the
    way to its run's page, which shows each such character."""
    run = start_run(timed, "payer", "pay 64 to AC\u202eME")["run_id"]
    wait_until(lambda: _status(timed, run) == "awaiting_approval", "the payer to wait")
    page = open_page(browser, timed, OPERATOR, "/inbox")
    try:
        row = page.locator(f"[data-testid=inbox-item][data-run='{run}']")
        expect(row.get_by_test_id("inbox-hidden-chars")).to_be_visible()
        expect(row.get_by_test_id("inbox-approve")).to_have_count(0)
        expect(row.get_by_test_id("inbox-deny")).to_have_count(1)
        expect(row.get_by_test_id("inbox-review")).to_have_attribute("href", f"/runs/{run}")
    finally:
        page.context.close()
