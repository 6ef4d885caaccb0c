"""Journals written by eudaimon v1 stay readable and fold to the same state, forever.

The files in `fixtures/v1/` are golden: never edit them to make a test pass. If a change
breaks one, the change broke every user's stored runs. Add new files for new shapes instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon.core.codec import event_from_json, event_to_json
from eudaimon.core.events import Event, ModelCalled, RunCompleted, RunStarted, ToolCompleted, ToolStarted
from eudaimon.core.messages import Message, Role, ToolCall, Usage
from eudaimon.core.state import CallStatus, PendingCall, RunState, Status

FIXTURES = Path(__file__).parent / "fixtures" / "v1"


def read_journal(name: str) -> list[Event]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [event_from_json(line) for line in lines if line.strip()]


def fold(name: str) -> RunState:
    state = RunState.from_events(read_journal(name))
    assert state is not None
    return state


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_every_golden_journal_is_one_gap_free_run_that_reencodes_losslessly(path: Path) -> None:
    """Invariant: each v1 row parses; a journal is one run with seqs 0..n-1; encoding what we read
    and reading it again gives the same event (today's writer can round-trip yesterday's rows)."""
    events = read_journal(path.name)
    assert events, "a golden journal is empty"
    assert {e.run_id for e in events} == {events[0].run_id}
    assert [e.seq for e in events] == list(range(len(events)))
    for event in events:
        assert event_from_json(event_to_json(event)) == event


def test_completed_tool_run_folds_to_completed_with_the_tool_result_in_order() -> None:
    """Invariant: a v1 tool-using run folds to `completed`, with the tool result placed between the
    assistant message that asked for it and the final answer, and its usage and cost summed."""
    state = fold("completed_tool_run.jsonl")
    assert state.status is Status.COMPLETED
    assert state.status == "completed"  # type: ignore[comparison-overlap]  # a str enum: it holds
    assert state.output == "2+3 = 5"
    assert state.structured_output is None
    assert state.agent == "calculator"
    assert state.thread_id == "thread-1"
    assert state.steps == 2
    assert state.next_seq == 8
    assert state.usage == Usage(30, 11, 4)
    assert state.cost_usd == pytest.approx(0.0003)
    assert state.cost_known
    assert state.pending == []
    assert state.messages == [
        Message.system("You add numbers.", id="sys-0"),
        Message.user("what is 2+3?", id="u-0"),
        Message.assistant(None, [ToolCall("call-1", "add", {"a": 2, "b": 3})], id="a-0"),
        Message.tool("call-1", "5", id="run-golden-tools:4"),
        Message.assistant("2+3 = 5", id="a-1"),
    ]


def test_run_awaiting_approval_folds_to_awaiting_approval_with_the_pending_call() -> None:
    """Invariant: a v1 run stopped at `approval_requested` folds to `awaiting_approval`, naming the
    call and its arguments, with no tool result yet (so resume can decide it, not re-ask the model)."""
    state = fold("awaiting_approval.jsonl")
    assert state.status is Status.AWAITING_APPROVAL
    assert not state.status.is_terminal
    assert state.awaiting_approval() == [PendingCall("call-9", "transfer", {"to": "bob", "amount": 100})]
    assert state.pending == [PendingCall("call-9", "transfer", {"to": "bob", "amount": 100})]
    assert state.calls["call-9"].status is CallStatus.AWAITING_APPROVAL
    assert state.tool_results == []
    assert state.cost_known is False  # cost_usd was null: unknown, not free
    assert [(m.role, m.content, m.id) for m in state.messages] == [
        (Role.USER, "send 100 to bob", "u-0"),
        (Role.ASSISTANT, "I will send it.", "a-0"),
    ]


def test_rows_that_omit_defaulted_fields_take_the_defaults() -> None:
    """Invariant: new fields always have defaults, so rows written before a field existed (here:
    every defaulted field omitted, messages without ids) still parse, and the fold derives stable
    message ids from the run id and seq."""
    events = read_journal("defaults_omitted.jsonl")
    started, called, tool_started, tool_completed, final = events[0], events[2], events[3], events[4], events[7]
    assert isinstance(started.data, RunStarted)
    assert started.data.thread_id is None
    assert started.data.parent is None
    assert started.data.guardrail_retries == 0
    assert isinstance(called.data, ModelCalled)
    assert called.data.usage == Usage()
    assert called.data.cost_usd is None
    assert called.data.stop_reason == "end_turn"
    assert called.data.message.tool_calls == (ToolCall("c1", "echo", {}),)
    assert isinstance(tool_started.data, ToolStarted)
    assert tool_started.data.attempt == 1
    assert isinstance(tool_completed.data, ToolCompleted)
    assert tool_completed.data.is_error is False
    assert isinstance(final.data, RunCompleted)
    assert final.data.structured is None

    state = fold("defaults_omitted.jsonl")
    assert state.status is Status.COMPLETED
    assert state.output == "hi"
    assert state.usage == Usage()
    assert state.cost_known is False
    assert state.messages == [
        Message.user("say hi", id="run-golden-defaults:0:0"),
        Message.assistant(None, [ToolCall("c1", "echo", {})], id="run-golden-defaults:2"),
        Message.tool("c1", "hi", id="run-golden-defaults:4"),
        Message.assistant("hi", id="run-golden-defaults:6"),
    ]


def test_started_call_with_unknown_outcome_folds_to_awaiting_reconciliation() -> None:
    """Invariant: a v1 run whose non-idempotent call started and never completed folds to
    `awaiting_reconciliation` (never re-run), and a raw-JSON-string argument is kept verbatim."""
    state = fold("outcome_unknown.jsonl")
    assert state.status is Status.AWAITING_RECONCILIATION
    assert state.unknown_outcomes() == [PendingCall("call-7", "send_email", '{"to": "boss@example.com"}')]
    assert state.calls["call-7"].attempt == 1
    assert state.awaiting_approval() == []
