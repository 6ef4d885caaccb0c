"""Forks with care: before forking, the page lists the WRITE and IRREVERSIBLE calls the parent
ran after that point and asks; a fork may be made without starting it, and starts on Resume."""

from __future__ import annotations

import os
import subprocess
import sys

from _inspector_support import start_run
from _server_support import HERE, OPERATOR, Server, wait_until
from playwright.sync_api import Page, expect


def _finished_refund(server: Server) -> str:
    run_id = str(start_run(server, "refunder", "refund A-17 and pay ALICE")["run_id"])
    with server.client(OPERATOR) as client:
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval", "the payment")
        assert client.post(f"/v1/runs/{run_id}/approvals/wire_1", json={"approved": True}).status_code == 200
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "completed", "the run to end")
    return run_id


def _run_count(server: Server) -> int:
    with server.client(OPERATOR) as client:
        return len(client.get("/v1/runs", params={"limit": 500}).json()["runs"])


def test_fork_lists_the_effects_it_may_repeat_and_can_be_called_off(page: Page, inspector: Server, shot) -> None:
    """Invariant: Fork here opens a confirmation naming the parent's WRITE and IRREVERSIBLE calls
    after that event; calling it off creates no run."""
    run_id = _finished_refund(inspector)
    page.goto(f"{inspector.url}/runs/{run_id}")
    before = _run_count(inspector)
    page.locator("[data-testid=event][data-type=run_started] [data-testid=fork-here]").click()
    dialog = page.get_by_test_id("fork-confirm")
    expect(dialog).to_be_visible()
    effects = dialog.get_by_test_id("fork-effects")
    expect(effects.locator("li")).to_have_count(2)
    expect(effects.locator('li[data-call=refund_1][data-effect="write"]')).to_contain_text("refund")
    expect(effects.locator('li[data-call=wire_1][data-effect="irreversible"]')).to_contain_text("send_wire")
    shot(page, "confirm")
    dialog.get_by_test_id("fork-cancel").click()
    expect(dialog).to_be_hidden()
    assert _run_count(inspector) == before
    last = page.get_by_test_id("event").last.get_attribute("data-seq")
    page.locator(f'[data-testid=event][data-seq="{last}"] [data-testid=fork-here]').click()
    expect(dialog.get_by_test_id("fork-effects-none")).to_be_visible()
    dialog.get_by_test_id("fork-cancel").click()


def test_a_fork_made_without_starting_waits_for_resume(page: Page, inspector: Server) -> None:
    """Invariant: "Fork, but do not start it" makes a run holding only the copied history, which
    no recovery sweep drives; Resume starts it."""
    run_id = _finished_refund(inspector)
    page.goto(f"{inspector.url}/runs/{run_id}")
    page.locator("[data-testid=event][data-type=run_started] [data-testid=fork-here]").click()
    page.get_by_test_id("fork-without-start").click()
    expect(page).not_to_have_url(f"{inspector.url}/runs/{run_id}")
    fork_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_test_id("event")).to_have_count(2)
    expect(page.get_by_test_id("resume")).to_be_visible()
    with inspector.client(OPERATOR) as client:
        events = client.get(f"/v1/runs/{fork_id}/events").json()["events"]
        assert [e["type"] for e in events] == ["run_queued", "run_started"]  # started over HTTP: queued first
        assert events[1]["parent"] == {"run_id": run_id, "seq": 1, "held": True}
    page.get_by_test_id("resume").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("awaiting_approval")
    expect(page.locator('[data-testid=event][data-type="tool_completed"]')).to_contain_text("refunded A-17")


def test_fork_with_start_false_over_the_api_is_not_driven(inspector: Server) -> None:
    """Invariant: `POST …/fork {"at_seq": 1, "start": false}` answers a fork not resumed, and the
    server's recovery sweep leaves it alone: a fork the CLI made afterwards (not held, driven by
    nobody) is taken up and run by that sweep while the held one keeps its copied events."""
    run_id = _finished_refund(inspector)
    with inspector.client(OPERATOR) as client:
        answer = client.post(f"/v1/runs/{run_id}/fork", json={"at_seq": 1, "start": False})
        assert answer.status_code == 201, answer.text
        held = answer.json()
        assert held["resumed"] is False and held["event_count"] == 2
        listed = lambda: {r["run_id"] for r in client.get("/v1/runs", params={"limit": 500}).json()["runs"]}  # noqa: E731
        before = listed()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
        command = [
            sys.executable,
            "-c",
            "from eudaimon.cli import app; app()",
            "runs",
            "fork",
            run_id,
            "--at",
            "1",
            "--yes",
        ]
        made = subprocess.run(
            [*command, "--store", f"sqlite:///{inspector.db}"], env=env, capture_output=True, text=True, check=False
        )
        assert made.returncode == 0, made.stdout + made.stderr
        (loose,) = listed() - before
        wait_until(
            lambda: client.get(f"/v1/runs/{loose}").json()["status"] == "awaiting_approval",
            "the recovery sweep to drive the CLI's fork",
            tries=400,
        )
        assert client.get(f"/v1/runs/{held['run_id']}").json()["event_count"] == 2
