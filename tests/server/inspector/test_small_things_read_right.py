"""The small things of the run page: call ids cased as they are, tool messages named by their
tool, a summary for every timeline row, a summary column that reads as lines, and a note box
that shows all that is typed."""

from __future__ import annotations

from _inspector_support import start_run
from _server_support import OPERATOR, Server, wait_until
from playwright.sync_api import Page, expect


def test_call_ids_are_cased_as_they_are_everywhere(page: Page, inspector: Server) -> None:
    """Invariant: a call id reads the same (as the journal has it) in the conversation, the
    pending call, the decisions and the timeline; no style upper-cases it."""
    run_id = str(start_run(inspector, "payer", "pay 51 to CASES")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    page.get_by_test_id("approve").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    ids = page.get_by_test_id("call-id")
    expect(ids.first).to_be_visible()
    shown = {text.removeprefix("call ").strip() for text in ids.all_inner_texts()}
    assert shown == {"wire_1"}, shown
    expect(page.get_by_test_id("decision").get_by_test_id("call-id")).to_have_text("wire_1")


def test_a_tool_message_is_labelled_with_its_tool(page: Page, inspector: Server) -> None:
    """Invariant: a tool result in the conversation names the tool that gave it."""
    run_id = str(start_run(inspector, "ticker", "ticks=1", wait=True)["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    tool_message = page.locator("[data-testid=message].tool")
    expect(tool_message.get_by_test_id("tool-name")).to_have_text("tick")
    expect(tool_message.get_by_test_id("call-id")).to_have_text("tick_1")


def test_retry_and_model_failure_rows_have_summaries(page: Page, inspector: Server) -> None:
    """Invariant: a model_retry_scheduled row says which retry, after how long and why; a
    model_failed row says the model failed and why."""
    retried = str(start_run(inspector, "family", "pay the invoice to SUMMARY")["run_id"])
    failed = str(start_run(inspector, "broken", "hello", wait=True)["run_id"])
    with inspector.client(OPERATOR) as client:
        wait_until(lambda: client.get(f"/v1/runs/{retried}").json()["status"] == "awaiting_approval", "the retried run")
    page.goto(f"{inspector.url}/runs/{retried}")
    retry = page.locator('[data-testid=event][data-type="model_retry_scheduled"] [data-testid=summary]')
    expect(retry).to_contain_text("retry 1 in")
    expect(retry).to_contain_text("503 from the provider")
    page.goto(f"{inspector.url}/runs/{failed}")
    failure = page.locator('[data-testid=event][data-type="model_failed"] [data-testid=summary]')
    expect(failure).to_contain_text("the model failed")
    expect(failure).to_contain_text("gpt-nonexistent")
    for summary in page.get_by_test_id("summary").all_inner_texts():
        assert summary.strip(), "a timeline row without a summary"


def test_the_summary_column_reads_as_lines_not_a_word_per_line(page: Page, inspector: Server) -> None:
    """Invariant: a summary of a dozen words is at most two lines high, on a laptop-sized window."""
    page.set_viewport_size({"width": 1280, "height": 800})
    run_id = str(start_run(inspector, "payer", "pay 52 to WRAPS " + "with a rather long note " * 2)["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    cell = page.locator("[data-testid=event][data-type=run_started] [data-testid=summary]")
    expect(cell).to_contain_text("WRAPS")
    line = float(cell.evaluate("(c) => parseFloat(getComputedStyle(c).lineHeight)"))
    box = cell.bounding_box()
    assert box is not None and box["height"] <= 2 * line + 12, (box, line)


def test_the_note_box_shows_all_that_is_typed(page: Page, inspector: Server) -> None:
    """Invariant: a long note wraps in a box that grows: nothing typed is hidden or cut."""
    run_id = str(start_run(inspector, "payer", "pay 53 to NOTES")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    note = page.get_by_test_id("approval-note")
    text = "Checked against invoice 2291 and the signed contract; finance confirmed the payee by phone. " * 3
    note.press_sequentially(text[:120])
    note.fill(text)
    note.dispatch_event("input")
    assert note.input_value() == text
    hidden = note.evaluate("(n) => n.scrollHeight - n.clientHeight")
    assert hidden <= 1, hidden
    assert note.evaluate("(n) => n.scrollWidth - n.clientWidth") <= 1


def test_a_count_of_one_reads_in_the_singular(page: Page, inspector: Server) -> None:
    """Invariant: the waterfall of a run of one model call says "1 span", not "1 spans"."""
    run_id = str(start_run(inspector, "ticker", "ticks=0", wait=True)["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    expect(page.locator("[data-testid=waterfall] .wf-head .wf-label")).to_have_text("1 span")
