"""Role-aware pages: who is signed in shows, and a viewer's pages hold no operator action."""

from __future__ import annotations

import asyncio
import concurrent.futures

import httpx2
from _inspector_support import open_page, start_run
from _server_support import OPERATOR, VIEWER, Server, wait_until
from playwright.sync_api import Browser, Page, expect
from test_decisions_over_http import _stranded_charge

ACTIONS = "[data-action]"


def test_whoami_names_the_principal_and_role(inspector: Server) -> None:
    """Invariant: GET /v1/whoami answers the key's principal and role; without a key, 401."""
    with inspector.client(OPERATOR) as client:
        assert client.get("/v1/whoami").json() == {"principal": "alice", "role": "operator"}
    with inspector.client(VIEWER) as client:
        assert client.get("/v1/whoami").json() == {"principal": "victor", "role": "viewer"}
    assert httpx2.get(inspector.url + "/v1/whoami").status_code == 401


def test_a_viewer_sees_who_they_are_and_no_operator_action(
    browser: Browser, page: Page, inspector: Server, shot
) -> None:
    """Invariant: signed in with a viewer key, the header says so and neither a waiting run, nor
    an unknown outcome, nor a finished run shows approve, deny, cancel, fork, reconcile or
    resume; the operator's page of the same run shows them."""
    waiting = str(start_run(inspector, "payer", "pay 41 to VIEWER-TEST")["run_id"])
    done = str(start_run(inspector, "ticker", "ticks=1", wait=True)["run_id"])
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        unknown = pool.submit(asyncio.run, _stranded_charge(inspector.db)).result()
    with inspector.client(OPERATOR) as client:
        wait_until(
            lambda: client.get(f"/v1/runs/{unknown}").json()["status"] == "awaiting_reconciliation",
            "the unknown outcome",
        )
    page.goto(f"{inspector.url}/runs/{waiting}")
    expect(page.get_by_test_id("whoami")).to_have_text("alice · operator")
    for action in ("approve", "deny", "cancel", "fork"):
        expect(page.locator(f"[data-action={action}]").first).to_be_attached()
    page.goto(f"{inspector.url}/runs/{unknown}")
    expect(page.locator("[data-action=reconcile]").first).to_be_attached()

    viewer = open_page(browser, inspector, VIEWER)
    try:
        expect(viewer.get_by_test_id("whoami")).to_have_text("victor · viewer")
        for run_id, shows in ((waiting, "pending-approval"), (unknown, "unknown-outcome"), (done, "event")):
            viewer.goto(f"{inspector.url}/runs/{run_id}")
            expect(viewer.get_by_test_id(shows).first).to_be_visible()
            expect(viewer.get_by_test_id("event").first).to_be_visible()
            expect(viewer.locator(ACTIONS)).to_have_count(0)
        viewer.goto(f"{inspector.url}/runs/{waiting}")
        expect(viewer.get_by_test_id("arguments")).to_contain_text("VIEWER-TEST")
        shot(viewer, "viewer")
        viewer.goto(inspector.url + "/")
        expect(viewer.get_by_test_id("runs").locator("[data-run]").first).to_be_visible()
        expect(viewer.locator(ACTIONS)).to_have_count(0)
    finally:
        viewer.context.close()


def test_without_a_key_the_page_says_not_signed_in(browser: Browser, inspector: Server) -> None:
    """Invariant: a page with no key says it is not signed in and offers no action."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(inspector.url + "/")
        expect(page.get_by_test_id("whoami")).to_have_text("not signed in")
        expect(page.locator(ACTIONS)).to_have_count(0)
    finally:
        context.close()
