"""Every journal event has its line in the run page's timeline, and an approval that timed out
ends its bar where the deadline decided it: before, `approval_timed_out`, `tool_waiting`,
`tool_woke` and `agent_replaced` rows read as their bare type, and a timed-out approval's bar ran
on to the run's end, as if it had waited for a person all along."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspector_support import open_page, start_run
from _server_support import KEYS, OPERATOR, Server, wait_until
from playwright.sync_api import Browser, expect

from eudaimon.core.events import EVENT_TYPES

SUMMARIES = Path(__file__).resolve().parents[3] / "src" / "eudaimon" / "server" / "inspector" / "summaries.js"


def test_every_event_type_has_a_summary() -> None:
    """Invariant: `summarize` names every type the journal can hold (its `default` shows the bare type)."""
    written = set(re.findall(r'case "([a-z_]+)"', SUMMARIES.read_text()))
    assert {kind.type for kind in EVENT_TYPES} - written == set()


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`_timed_agents`: slowpay's approval times out after 1 s, napper's tool waits 1 s once."""
    db = tmp_path_factory.mktemp("timed-words") / "runs.db"
    env = {"EUDAIMON_API_KEYS": KEYS, "EUDAIMON_TEST_APPROVAL_S": "1", "EUDAIMON_TEST_WAIT_S": "1"}
    args = ("--agent", "_timed_agents:slowpay", "--agent", "_timed_agents:napper", "--timer-interval", "0.2")
    server = Server(db, env=env, args=args).start()
    yield server
    server.stop()


def _finished(server: Server, run_id: str) -> bool:
    with server.client(OPERATOR) as client:
        return bool(client.get(f"/v1/runs/{run_id}").json()["status"] == "completed")


def test_a_timed_out_approval_reads_so_and_its_bar_ends_at_the_deadline(browser: Browser, timed: Server) -> None:
    run_id = str(start_run(timed, "slowpay", "pay ACME")["run_id"])
    wait_until(lambda: _finished(timed, run_id), "the deadline to deny the call and the run to end")
    page = open_page(browser, timed, OPERATOR, f"/runs/{run_id}")
    try:
        row = page.locator("[data-testid=timeline] [data-type=approval_timed_out]")
        expect(row.get_by_test_id("summary")).to_contain_text("call_1: no decision within 1s (denied at the deadline")
        bar = page.locator("[data-testid=waterfall] [data-span][data-kind=approval]")
        expect(bar).to_have_attribute("aria-label", re.compile(r"timed out: denied"))
        start, duration = (int(str(bar.get_attribute(f"data-{n}"))) for n in ("start-ms", "duration-ms"))
        ended = page.locator("[data-testid=waterfall] [data-span][data-kind=model]").last
        assert start + duration <= int(str(ended.get_attribute("data-start-ms")))  # before the model's answer
        effect = page.locator("[data-testid=effects] [data-effect]")
        expect(effect).to_contain_text("denied by deadline: no decision within 1s")
        expect(effect).not_to_contain_text("denied: denied")
    finally:
        page.context.close()


def test_a_waiting_tool_and_its_wake_read_in_words(browser: Browser, timed: Server) -> None:
    run_id = str(start_run(timed, "napper", "fetch the report")["run_id"])
    wait_until(lambda: _finished(timed, run_id), "the tool to wake and the run to end")
    page = open_page(browser, timed, OPERATOR, f"/runs/{run_id}")
    try:
        timeline = page.get_by_test_id("timeline")
        waited = timeline.locator("[data-type=tool_waiting]").get_by_test_id("summary")
        expect(waited).to_contain_text("fetch_report (call_1) waits until")
        expect(waited).to_contain_text("the report is being built")
        expect(timeline.locator("[data-type=tool_woke]").get_by_test_id("summary")).to_contain_text(
            "call_1: woke; runs again"
        )
    finally:
        page.context.close()
