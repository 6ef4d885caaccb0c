"""The run page's Effects panel: one `[data-effect]` row per call that is not READ, with its
outcome and the approval behind it; a row's call button shows its span and intent."""

from __future__ import annotations

from _inspector_support import start_run
from _server_support import OPERATOR, Server, wait_until
from playwright.sync_api import Page, expect


def test_the_effects_panel_lists_the_runs_writes_and_their_approval(page: Page, inspector: Server, shot) -> None:
    """Invariant: a finished refund run shows its WRITE (refund) and its approved IRREVERSIBLE
    payment (send_wire, approved by the operator), and no READ call."""
    run_id = str(start_run(inspector, "refunder", "refund A-17 and pay ALICE")["run_id"])
    with inspector.client(OPERATOR) as client:
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval", "the payment")
        assert client.post(f"/v1/runs/{run_id}/approvals/wire_1", json={"approved": True}).status_code == 200
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "completed", "the run to end")
        listed = client.get(f"/v1/runs/{run_id}/effects").json()["effects"]
    page.goto(f"{inspector.url}/runs/{run_id}")
    panel = page.get_by_test_id("effects")
    expect(panel.locator("[data-effect]")).to_have_count(len(listed))
    assert {e["effect"] for e in listed} == {"write", "irreversible"}
    wire = panel.locator('[data-effect="irreversible"][data-call=wire_1]')
    expect(wire.get_by_test_id("effect-outcome")).to_have_text("done")
    expect(wire.get_by_test_id("effect-approval")).to_contain_text("approved by")
    expect(panel.locator('[data-effect="write"][data-call=refund_1]')).to_contain_text("refund")
    wire.get_by_test_id("effect-call").click()
    expect(page.locator("[data-testid=event][data-type=tool_started].picked")).to_have_count(1)
    shot(page, "effects")
