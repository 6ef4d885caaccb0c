"""The inspector shows each webhook delivery and the receiver's answer: here a receiver that
cannot be reached, so the delivery stays pending with its refused attempts listed."""

from __future__ import annotations

from pathlib import Path

from _inspector_support import open_page, start_run
from _server_support import KEYS, OPERATOR, Server
from playwright.sync_api import Browser, expect

from eudaimon.server.webhooks import new_secret
from support.ports import free_port


def test_a_delivery_and_its_answer_are_listed(browser: Browser, tmp_path: Path, shot) -> None:
    hook = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there
    args = ("--webhook", hook, "--webhook-secret-env", "HOOK_SECRET", "--webhook-events", "awaiting_approval")
    server = Server(tmp_path / "runs.db", env={"EUDAIMON_API_KEYS": KEYS, "HOOK_SECRET": new_secret()}, args=args)
    server.start()
    try:
        run_id = start_run(server, "payer", "pay 5 to bob")["run_id"]
        page = open_page(browser, server, OPERATOR, "/schedules")
        row = page.locator(f"[data-testid=webhook-deliveries] [data-delivery^='{run_id}.']")
        for _ in range(40):  # the page reads the list once: reload until the first attempt is in
            if row.count() and "unreachable" in row.inner_text():
                break
            page.wait_for_timeout(250)
            page.reload()
        expect(row).to_contain_text("awaiting_approval")
        expect(row).to_contain_text("pending")
        expect(row).to_contain_text("unreachable")
        expect(row.locator("a")).to_have_text(run_id)
        shot(page, "webhook-deliveries")
        page.context.close()
    finally:
        server.stop()
