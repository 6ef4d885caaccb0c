"""A run page that never lies: it follows the journal, so a decision made elsewhere shows by
itself; it says when the server cannot be reached, turns its actions off, and catches up when
the server is back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _inspector_support import inspector_server, open_page, start_run
from _server_support import HERE, OPERATOR, Server
from playwright.sync_api import Browser, Page, expect


def _cli_approve(db: object, run_id: str, call_id: str, note: str) -> None:
    """`eudaimon runs approve` in a process of its own, on the server's store."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "runs", "approve", run_id, call_id]
    command += ["--store", f"sqlite:///{db}", "--by", "carol-at-the-cli", "--note", note]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_approval_from_the_cli_shows_on_an_open_page(page: Page, inspector: Server) -> None:
    """Invariant: a page open on a waiting run shows a decision made by another process (the CLI,
    on the same store) without a reload: the decision, who made it, and no Approve button."""
    run_id = str(start_run(inspector, "payer", "pay 31 to CLI-PAYEE")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    expect(page.get_by_test_id("pending-approval")).to_be_visible()
    _cli_approve(inspector.db, run_id, "wire_1", "approved at the terminal")
    expect(page.get_by_test_id("pending-approval")).to_have_count(0)
    expect(page.get_by_test_id("approve")).to_have_count(0)
    decision = page.get_by_test_id("decision")
    expect(decision.get_by_test_id("decided-by")).to_have_text("carol-at-the-cli")
    expect(page.locator('[data-testid=event][data-type="approval_decided"]')).to_have_count(1)


def test_an_approval_from_another_browser_shows_here(browser: Browser, page: Page, inspector: Server) -> None:
    """Invariant: two pages on one run: approving in one completes the run in the other."""

    run_id = str(start_run(inspector, "payer", "pay 32 to TWO-TABS")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    other = open_page(browser, inspector, OPERATOR, f"/runs/{run_id}")
    try:
        other.get_by_test_id("approve").click()
        expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
        expect(page.get_by_test_id("pending-approval")).to_have_count(0)
    finally:
        other.context.close()


def test_an_approval_through_another_server_on_the_store_shows_here(
    page: Page, inspector: Server, tmp_path: Path
) -> None:
    """Invariant: a second server on the same journal approves; the page open on the first
    server shows the decision and the run's end without a reload."""
    run_id = str(start_run(inspector, "payer", "pay 35 to OTHER-SERVER")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    expect(page.get_by_test_id("pending-approval")).to_be_visible()
    other = inspector_server(inspector.db, log=tmp_path / "other.log").start()
    try:
        with other.client(OPERATOR) as client:
            answer = client.post(
                f"/v1/runs/{run_id}/approvals/wire_1", json={"approved": True, "note": "from the other server"}
            )
            assert answer.status_code == 200, answer.text
        expect(page.get_by_test_id("decision")).to_contain_text("from the other server")
        expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
        expect(page.get_by_test_id("approve")).to_have_count(0)
    finally:
        other.stop()


def test_the_offline_banner_disables_actions_and_the_page_catches_up(browser: Browser, tmp_path: Path, shot) -> None:
    """Invariant: with the server killed, the page says so and its actions are off; a decision
    made meanwhile (the CLI, on the same store) shows once the server is back on its port, with
    no reload, and the actions come back."""

    server = inspector_server(tmp_path / "runs.db").start()
    page = None
    try:
        first = str(start_run(server, "payer", "pay 33 to OFFLINE-ONE")["run_id"])
        second = str(start_run(server, "payer", "pay 34 to OFFLINE-TWO")["run_id"])
        page = open_page(browser, server, OPERATOR, f"/runs/{first}")
        expect(page.get_by_test_id("approve")).to_be_enabled()
        expect(page.get_by_test_id("offline")).to_be_hidden()
        server.kill()
        expect(page.get_by_test_id("offline")).to_be_visible()
        expect(page.get_by_test_id("approve")).to_be_disabled()
        expect(page.get_by_test_id("deny")).to_be_disabled()
        expect(page.get_by_test_id("cancel-run")).to_be_disabled()
        shot(page, "offline")
        _cli_approve(server.db, first, "wire_1", "decided while the server was down")
        restarted = Server(server.db, port=server.port, env=server.env, args=server.args, log=server.log).start()
        server = restarted
        expect(page.get_by_test_id("offline")).to_be_hidden()
        expect(page.get_by_test_id("decision").get_by_test_id("decided-by")).to_have_text("carol-at-the-cli")
        expect(page.get_by_test_id("pending-approval")).to_have_count(0)
        page.goto(f"{server.url}/runs/{second}")
        expect(page.get_by_test_id("approve")).to_be_enabled()
    finally:
        if page is not None:
            page.context.close()
        server.stop()
