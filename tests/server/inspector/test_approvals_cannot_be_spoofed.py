"""Approvals that cannot be spoofed: hidden characters shown and flagged, identical calls told
apart, and arguments an approver may edit (checked by the server) before the call runs."""

from __future__ import annotations

from _inspector_support import start_run
from _server_support import OPERATOR, Server
from playwright.sync_api import Page, expect


def test_a_bidi_override_in_an_argument_is_shown_and_flagged(page: Page, inspector: Server, shot) -> None:
    """Invariant: `\\u202eEMCA` (which a browser would draw as ACME) shows as ⟨U+202E⟩EMCA, the
    call is flagged, and the raw character is nowhere in what the approver reads."""
    run_id = str(start_run(inspector, "payer", "pay 250 to \u202eEMCA")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    arguments = approval.get_by_test_id("arguments")
    expect(arguments).to_contain_text('"to": "⟨U+202E⟩EMCA"')
    expect(approval.get_by_test_id("hidden-chars-warning")).to_contain_text("U+202E")
    expect(approval).to_have_attribute("data-hidden-chars", "1")
    assert "\u202e" not in str(arguments.text_content())
    assert "\u202e" not in str(page.get_by_test_id("conversation").text_content())
    approval.get_by_text("Edit the arguments before approving").click()
    expect(approval.get_by_test_id("arguments-editor")).to_have_value(
        '{\n  "amount_usd": 250,\n  "to": "\\u202eEMCA"\n}'
    )
    shot(page, "bidi")


def test_zero_width_and_control_characters_are_shown(page: Page, inspector: Server) -> None:
    """Invariant: a zero-width space and a C0 control in a pending call are shown as code points."""
    run_id = str(start_run(inspector, "payer", "pay 5 to AB\u200bC\u0007D")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    expect(approval.get_by_test_id("arguments")).to_contain_text("AB⟨U+200B⟩C⟨U+0007⟩D")
    expect(approval.get_by_test_id("hidden-chars-warning")).to_contain_text("2 invisible")


def test_a_plain_call_is_not_flagged(page: Page, inspector: Server) -> None:
    """Invariant: ordinary text (accents, emoji, newlines) is not flagged."""
    run_id = str(start_run(inspector, "payer", "pay 5 to Zoë-🙂")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    expect(approval.get_by_test_id("arguments")).to_contain_text('"to": "Zoë-🙂"')
    expect(approval.get_by_test_id("hidden-chars-warning")).to_have_count(0)


def test_identical_pending_calls_show_their_call_ids(page: Page, inspector: Server) -> None:
    """Invariant: two pending calls with the same tool and arguments each show their call id and
    say which other call they are identical to."""
    run_id = str(start_run(inspector, "twins", "two wires")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    a = page.locator("[data-testid=pending-approval][data-call=wire_a]")
    b = page.locator("[data-testid=pending-approval][data-call=wire_b]")
    expect(a.get_by_test_id("call-id")).to_have_text("call wire_a")
    expect(b.get_by_test_id("call-id")).to_have_text("call wire_b")
    expect(a.get_by_test_id("identical-calls")).to_contain_text("wire_b")
    expect(b.get_by_test_id("identical-calls")).to_contain_text("wire_a")


def test_approve_with_edited_arguments_runs_the_call_with_them(page: Page, inspector: Server, shot) -> None:
    """Invariant: arguments edited in the page are what the tool gets, and the journal's
    `approval_decided` records them."""
    run_id = str(start_run(inspector, "payer", "pay 250 to ACME")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    approval.get_by_text("Edit the arguments before approving").click()
    approval.get_by_test_id("arguments-editor").fill('{"amount_usd": 200, "to": "ACME-Verified"}')
    approval.get_by_test_id("approval-note").fill("payee corrected per the contract")
    shot(page, "editing")
    approval.get_by_test_id("approve-edited").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    expect(page.get_by_test_id("conversation")).to_contain_text("Done: sent $200.00 to ACME-Verified.")
    with inspector.client(OPERATOR) as client:
        events = client.get(f"/v1/runs/{run_id}/events").json()["events"]
    decided = next(e for e in events if e["type"] == "approval_decided")
    assert decided["arguments"] == {"amount_usd": 200, "to": "ACME-Verified"}
    expect(page.locator('[data-testid=event][data-type="approval_decided"]')).to_contain_text("with edited arguments")


def test_edited_arguments_the_server_refuses_show_its_message(page: Page, inspector: Server) -> None:
    """Invariant: arguments that do not fit the tool's schema are refused by the server (422):
    the page shows its message and the call still waits; text that is not JSON is never sent."""
    run_id = str(start_run(inspector, "payer", "pay 9 to CHECKED")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    approval = page.get_by_test_id("pending-approval")
    approval.get_by_text("Edit the arguments before approving").click()
    editor = approval.get_by_test_id("arguments-editor")
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    editor.fill('{"amount_usd": 9, "to": ')
    approval.get_by_test_id("approve-edited").click()
    expect(approval.get_by_test_id("approval-error")).to_contain_text("not JSON")
    assert posted == []
    editor.fill('{"amount_usd": "lots", "to": "CHECKED"}')
    approval.get_by_test_id("approve-edited").click()
    expect(approval.get_by_test_id("approval-error")).to_contain_text("amount_usd")
    assert len(posted) == 1
    expect(page.locator("h1 [data-testid=status]")).to_have_text("awaiting_approval")
    with inspector.client(OPERATOR) as client:
        assert client.get(f"/v1/runs/{run_id}").json()["decisions"] == []
