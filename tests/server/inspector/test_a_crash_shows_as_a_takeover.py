"""A crash as it was, in a real browser: a server killed (SIGKILL) in the middle of a model call,
another server on the same store taking the run over. The waterfall ends the interrupted call
where the process was lost and marks the takeover (which process, when, after how long); the
server that took over says so in its log, in one line. A waiting approval's time grows, live.

The screenshots `docs/images/inspector/takeover.png` and `approval-waiting.png` are written by
these tests when `EUDAIMON_DOCS_SCREENSHOTS=1`."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from _inspector_support import docs_shot, inspector_server, open_page, start_run
from _server_support import OPERATOR, Server, wait_until
from playwright.sync_api import Browser, Page, expect


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, int, int]]:
    """A run whose first server was killed mid model call and that a second server took over:
    (the second server, the run, the first server's pid, the second's)."""
    db = tmp_path_factory.mktemp("crash") / "runs.db"
    # Both servers serve the store, as in a deployment of two; the second's recovery sweep finds
    # the run driven by the first (its lease live) and leaves it, until the first is killed.
    first = inspector_server(db, env={"PONDER_HANG": "1", "EUDAIMON_LEASE_TTL_S": "4"}).start()
    second = inspector_server(db)
    try:
        run_id = str(start_run(first, "ponderer", "what is a durable agent?")["run_id"])
        with first.client(OPERATOR) as client:
            wait_until(
                lambda: any(
                    e["type"] == "model_attempt_started"
                    for e in client.get(f"/v1/runs/{run_id}/events").json()["events"]
                ),
                "the model call to begin",
            )
        second.start()
        time.sleep(2.5)  # a sweep of the second server (every 2 s) has found the first's lease
        assert first.process is not None
        first_pid = first.process.pid
        first.kill()
        with second.client(OPERATOR) as client:
            wait_until(
                lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "completed", "the takeover", pause_s=0.1
            )
        assert second.process is not None
        yield second, run_id, first_pid, second.process.pid
    finally:
        first.kill()
        second.stop()


def test_a_crash_mid_call_ends_the_call_and_marks_the_takeover(
    browser: Browser, crashed: tuple[Server, str, int, int], shot
) -> None:
    """Invariant: after a crash the interrupted model span ends where the lost driver's last event
    was (not at the run's end); a takeover span says which process took over from which, when
    and after how long; the timeline has the `run_taken_over` event."""
    server, run_id, first_pid, second_pid = crashed
    page = open_page(browser, server, OPERATOR, f"/runs/{run_id}")
    waterfall = page.get_by_test_id("waterfall")
    marker = waterfall.locator("[data-span][data-kind=takeover]")
    expect(marker).to_have_count(1)
    owner = str(marker.get_attribute("data-owner"))
    previous = str(marker.get_attribute("data-previous-owner"))
    assert f":{second_pid}:" in owner and f":{first_pid}:" in previous
    orphaned = int(str(marker.get_attribute("data-orphaned-ms")))
    assert 2000 <= orphaned <= 40_000  # the lease (4 s) had to lapse, then a sweep (every 2 s) came
    interrupted = waterfall.locator("[data-span][data-kind=model][data-interrupted=true]")
    expect(interrupted).to_have_count(1)
    start, duration = (int(str(interrupted.get_attribute(f"data-{n}"))) for n in ("start-ms", "duration-ms"))
    assert start + duration == int(str(marker.get_attribute("data-start-ms")))  # ends where the process was lost
    assert duration < orphaned  # not drawn as running on until the takeover, nor to the run's end
    expect(waterfall.locator("[data-span][data-kind=model]:not([data-interrupted])")).to_have_count(1)  # the new try
    expect(waterfall).to_contain_text(f"taken over by {owner}")
    row = page.locator("[data-testid=event][data-type=run_taken_over]")
    expect(row).to_contain_text(f"from {previous}")
    shot(page, "takeover")
    docs_shot(page, "takeover", "main")
    page.context.close()


def test_the_server_logs_the_takeover_in_one_line(crashed: tuple[Server, str, int, int]) -> None:
    """Invariant: the server that took the run over logs it as one line: the run, who took it
    over, from which process, and how long it had no driver."""
    server, run_id, first_pid, second_pid = crashed
    lines = [line for line in server.output().splitlines() if f"run {run_id} taken over" in line]
    assert len(lines) == 1, server.output()
    assert re.search(
        rf"taken over by \S+:{second_pid}:\S+ from \S+:{first_pid}:\S+ \(its last event #\d+\), orphaned for \d",
        lines[0],
    )


def test_a_waiting_approval_shows_its_time_waited_growing(page: Page, inspector: Server, shot) -> None:
    """Invariant: an approval not decided is `data-waiting`; its time waited so far grows on the
    page with no event arriving (not a frozen "0 ms…")."""
    run_id = str(start_run(inspector, "payer", "pay 40 to LEE")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    bar = page.locator("[data-testid=waterfall] [data-span][data-kind=approval][data-waiting]")
    expect(bar).to_have_count(1)
    first = int(str(bar.get_attribute("data-duration-ms")))
    page.wait_for_timeout(2200)
    second = int(str(bar.get_attribute("data-duration-ms")))
    assert second >= first + 1500, (first, second)
    row = page.locator("[data-testid=waterfall] .wf-row", has=page.locator("[data-kind=approval][data-waiting]"))
    expect(row.locator(".wf-ms")).to_contain_text("waited so far")
    expect(row.locator(".wf-ms")).not_to_contain_text("…")
    shot(page, "approval-waiting")
    docs_shot(page, "approval-waiting", "main")
    page.get_by_test_id("approve").click()
    expect(page.locator("[data-testid=waterfall] [data-kind=approval][data-waiting]")).to_have_count(0)
