"""The inspector never drops an edit, and shows one as an edit.

With unsaved edits in the arguments editor there is one way to approve: the edited call, named as
such (the plain Approve is gone), and a way to discard the edits. Every button the page offers is
clicked with edits in place, and the journal says what ran. An approved edit shows in the
Decisions table, the Conversation and the timeline: who changed what, from what to what.

Before: a refund edited to $50 and approved with the plain Approve button ran the model's
original $2,560, without a word; the Decisions table and the Conversation showed the model's
arguments while the edited ones ran.
"""

from __future__ import annotations

from typing import Any

from _inspector_support import start_run
from _server_support import OPERATOR, Server
from playwright.sync_api import Page, expect


def _events(inspector: Server, run_id: str) -> list[dict[str, Any]]:
    with inspector.client(OPERATOR) as client:
        events: list[dict[str, Any]] = client.get(f"/v1/runs/{run_id}/events").json()["events"]
    return events


def _edit(page: Page, inspector: Server, text: str, edited: str) -> Any:
    run_id = str(start_run(inspector, "payer", text)["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    approval.get_by_text("Edit the arguments before approving").click()
    approval.get_by_test_id("arguments-editor").fill(edited)
    return run_id, approval


def test_with_edits_the_only_approve_is_the_edited_call(page: Page, inspector: Server, shot) -> None:
    """Invariant: once the arguments are edited, the plain Approve is hidden and one primary
    button, "Approve the edited call", approves; a warning says the edited call will run.
    Clicking it runs the edit."""
    run_id, approval = _edit(page, inspector, "pay 2560 to ACME", '{"amount_usd": 50, "to": "ACME"}')
    expect(approval.get_by_test_id("approve")).to_be_hidden()
    approve = approval.get_by_role("button", name="Approve the edited call")
    expect(approve).to_be_visible()
    expect(approval.locator("button:visible", has_text="Approve")).to_have_count(1)
    expect(approval.get_by_test_id("edited-warning")).to_be_visible()
    shot(page, "edited")
    approve.click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    [started] = [e for e in _events(inspector, run_id) if e["type"] == "tool_started"]
    assert started["arguments"] == {"amount_usd": 50, "to": "ACME"}


def test_discard_edits_brings_back_the_plain_approve(page: Page, inspector: Server) -> None:
    """Invariant: "Discard edits" restores the model's arguments in the editor, the plain
    Approve comes back (and runs the call as asked)."""
    run_id, approval = _edit(page, inspector, "pay 70 to ACME", '{"amount_usd": 7, "to": "ACME"}')
    approval.get_by_test_id("discard-edits").click()
    expect(approval.get_by_test_id("arguments-editor")).to_have_value('{\n  "amount_usd": 70,\n  "to": "ACME"\n}')
    expect(approval.get_by_test_id("approve-edited")).to_be_hidden()
    expect(approval.get_by_test_id("discard-edits")).to_be_hidden()
    approval.get_by_test_id("approve").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    [started] = [e for e in _events(inspector, run_id) if e["type"] == "tool_started"]
    assert started["arguments"] == {"amount_usd": 70.0, "to": "ACME"}


def test_every_button_the_page_offers_with_edits_in_place(page: Page, inspector: Server) -> None:
    """Invariant: with edits in place, each visible button of the approval is clicked in turn
    (on a fresh run each): none runs the model's arguments. Approve runs the edit; Deny denies;
    Discard edits leaves the call waiting with the model's arguments in the editor."""
    run_id, approval = _edit(page, inspector, "pay 2560 to ACME", '{"amount_usd": 50, "to": "ACME"}')
    names = sorted(str(b.text_content()) for b in approval.locator("button:visible").all())
    assert names == ["Approve the edited call", "Deny", "Discard edits"], names
    for name in names:
        run_id, approval = _edit(page, inspector, "pay 2560 to ACME", '{"amount_usd": 50, "to": "ACME"}')
        approval.get_by_role("button", name=name).click()
        if name == "Discard edits":
            expect(approval.get_by_test_id("approve")).to_be_visible()
            assert not [e for e in _events(inspector, run_id) if e["type"] == "approval_decided"]
            continue
        expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
        events = _events(inspector, run_id)
        started = [e["arguments"] for e in events if e["type"] == "tool_started"]
        assert started == ([] if name == "Deny" else [{"amount_usd": 50, "to": "ACME"}]), (name, started)
        assert {"amount_usd": 2560.0, "to": "ACME"} not in started


def test_an_approved_edit_shows_as_an_edit(page: Page, inspector: Server, shot) -> None:
    """Invariant: the Decisions table and the Conversation show who changed `amount_usd` from
    500 to 9000 and what ran; the timeline's `approval_decided` says the change too."""
    _, approval = _edit(page, inspector, "pay 500 to ACME", '{"amount_usd": 9000, "to": "ACME"}')
    approval.get_by_role("button", name="Approve the edited call").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    decision = page.get_by_test_id("decisions").get_by_test_id("edit-diff")
    expect(decision).to_contain_text("edited by alice before it ran")
    expect(decision.locator("[data-field=amount_usd] del")).to_have_text("500")
    expect(decision.locator("[data-field=amount_usd] ins")).to_have_text("9000")
    said = page.get_by_test_id("conversation").get_by_test_id("edit-diff")
    expect(said).to_contain_text("amount_usd: 500 → 9000")
    expect(said.get_by_test_id("ran-with")).to_contain_text('"amount_usd": 9000')
    expect(page.locator('[data-testid=event][data-type="approval_decided"]')).to_contain_text(
        "with edited arguments (amount_usd: 500 → 9000)"
    )
    shot(page, "shown")
