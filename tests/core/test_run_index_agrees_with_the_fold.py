"""The run index says what the fold says: status, pending approvals, steps, tokens, cost, the
outcome and the parent, after every prefix of a journal, whether the row is built in one go or
advanced batch by batch, as a store does.

Journals come from three sources: the golden v1 journals, random runs of a real agent
(approvals granted or denied, failing, malformed and unknown tools), and random event
sequences (any order the fold accepts: calls left waiting, unknown outcomes reconciled or
retried, terminal events in the middle of a batch).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eudaimon import Message, ToolCall
from eudaimon.core.codec import event_from_json
from eudaimon.core.errors import CorruptEvent
from eudaimon.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    BudgetExceeded,
    Event,
    EventData,
    GuardrailRejected,
    ModelCalled,
    ModelFailed,
    ModelRetryScheduled,
    ParentRef,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolStarted,
)
from eudaimon.core.messages import Usage
from eudaimon.core.run_index import RunRow
from eudaimon.core.state import RunState, Status
from eudaimon.stores import MemoryStore
from support.agents import scripted_agent

GOLDEN = Path(__file__).parent.parent / "journal" / "fixtures" / "v1"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def assert_agrees(events: list[Event]) -> None:
    """After each prefix: the row (built whole, and advanced event by event) matches the fold."""
    state = RunState(run_id=events[0].run_id)
    advanced = RunRow(events[0].run_id)
    for n, event in enumerate(events):
        state.apply(event)
        advanced = advanced.advance([event])
        whole = RunRow.of(events[: n + 1])
        assert whole == advanced, f"prefix {n} ({event.type}): built whole != advanced"
        where = f"prefix {n} ({event.type})"
        assert advanced.status == state.status.value, where
        assert advanced.pending_approvals == len(state.awaiting_approval()), where
        assert advanced.event_count == state.next_seq and advanced.steps == state.steps, where
        assert (advanced.input_tokens, advanced.output_tokens) == (state.usage.input_tokens, state.usage.output_tokens)
        assert advanced.cost == (state.cost_usd if state.cost_known else None), where
        assert advanced.agent == state.agent and advanced.thread_id == state.thread_id, where
        assert advanced.input_text == state.input[:2000], where
        ended = state.status.is_terminal
        assert (advanced.duration_ms is not None) == ended, where
        if state.status is Status.COMPLETED:
            assert advanced.output_text == (state.output or "")[:2000] and advanced.error_text is None, where
        elif ended:
            assert advanced.error_text == (state.error or "")[:2000], where
        parent = state.parent.run_id if state.parent else (state.parent_call.run_id if state.parent_call else None)
        assert advanced.parent_run_id == parent, where
        assert RunRow.from_json(advanced.to_json()) == advanced, where


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.jsonl")), ids=lambda p: p.stem)
def test_golden_journals(path: Path) -> None:
    """Invariant: over every v1 journal the suite keeps, index and fold agree at every event."""
    events = [event_from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert_agrees(events)


CALLS = st.sampled_from(
    [
        ("lookup", {"key": "a"}),
        ("lookup", '{"key": '),
        ("explode", {"reason": "boom"}),
        ("missing_tool", {}),
        ("transfer", {"amount": 5}),
    ]
)
TURN = st.one_of(st.lists(CALLS, min_size=1, max_size=3), st.text(max_size=20))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TURN, max_size=4), st.lists(st.booleans(), min_size=6, max_size=6))
async def test_runs_of_a_real_agent(turns: list[list[tuple[str, object]] | str], decisions: list[bool]) -> None:
    """Invariant: over the journals the runtime writes (approvals, denials, errors, resumes),
    the store's row is the row of its journal and agrees with the fold at every event."""
    store = MemoryStore()
    agent = scripted_agent(turns, store)
    with contextlib.suppress(Exception):
        await agent.prompt("go")
    [summary] = await store.list_runs()
    run_id = summary.run_id
    for decision in decisions:
        state = await agent.state(run_id)
        if state.status is not Status.AWAITING_APPROVAL:
            break
        for call in state.awaiting_approval():
            await agent.approve(run_id, call.id, decision, by="tester")
        with contextlib.suppress(Exception):
            await agent.resume(run_id)
    events = await store.load(run_id)
    assert await store.run_row(run_id) == RunRow.of(events)
    assert_agrees(events)


IDS = ("a", "b", "c")
STEP = st.one_of(
    st.tuples(st.just("model"), st.lists(st.sampled_from(IDS), max_size=3), st.integers(0, 50), st.booleans()),
    st.tuples(
        st.sampled_from(["started", "completed", "asked", "approved", "rejected", "denied", "unknown"]),
        st.sampled_from(IDS),
    ),
    st.tuples(st.sampled_from(["reconciled", "retried"]), st.sampled_from(IDS)),
    st.tuples(st.sampled_from(["retry_scheduled", "model_failed", "guardrail"]), st.integers(0, 9)),
    st.tuples(st.sampled_from(["completed_run", "failed_run", "cancelled_run", "budget"])),
)


def _payload(step: tuple[object, ...], n: int) -> EventData:
    kind = step[0]
    usage = Usage(input_tokens=n, output_tokens=n + 1)
    match step:
        case ("model", ids, tokens, priced):
            calls = tuple(ToolCall(str(i), f"tool_{i}", {}) for i in ids)  # type: ignore[union-attr]
            message = Message.assistant("thinking", tool_calls=list(calls))
            cost = 0.001 * int(tokens) if priced else None  # type: ignore[call-overload]
            return ModelCalled(step=n, request_id=f"r{n}", message=message, usage=Usage(int(tokens), 1), cost_usd=cost)  # type: ignore[call-overload]
        case ("started", call):
            return ToolStarted(call_id=str(call), tool=f"tool_{call}", idempotency_key="k")
        case ("completed", call):
            return ToolCompleted(call_id=str(call), tool=f"tool_{call}", output="out")
        case ("asked", call):
            return ApprovalRequested(call_id=str(call), tool=f"tool_{call}")
        case ("approved" | "rejected", call):
            return ApprovalDecided(call_id=str(call), approved=kind == "approved")
        case ("denied", call):
            return ToolDenied(call_id=str(call), tool=f"tool_{call}")
        case ("unknown", call):
            return ToolOutcomeUnknown(call_id=str(call), tool=f"tool_{call}")
        case ("reconciled" | "retried", call):
            return ToolReconciled(call_id=str(call), output="settled", retry=kind == "retried")
        case ("retry_scheduled", _):
            return ModelRetryScheduled(
                step=n, request_id="r", retry_number=1, delay_ms=1, error="x", observed_usage=usage
            )
        case ("model_failed", _):
            return ModelFailed(step=n, error="billed", usage=usage, cost_usd=0.5)
        case ("guardrail", _):
            return GuardrailRejected(step=n, guardrail="g", feedback="again", usage=usage)
        case ("completed_run",):
            return RunCompleted(output="the answer " * 30)
        case ("failed_run",):
            return RunFailed(error="it broke")
        case ("cancelled_run",):
            return RunCancelled(reason="")
        case _:
            return BudgetExceeded(reason="too dear", spent=2.0, limit=1.0)


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=40), st.booleans())
def test_random_event_sequences(steps: list[tuple[object, ...]], forked: bool) -> None:
    """Invariant: over any sequence of events the fold accepts (an event it refuses is left
    out, as no store would keep it), index and fold agree at every event."""
    parent = ParentRef("run-parent", 3) if forked else None
    first = RunStarted(agent="a", input="hello " * 500, messages=(), thread_id="t", parent=parent)
    events = [Event.of("run-x", 0, T0, first)]
    state = RunState.from_events(events)
    assert state is not None
    for n, step in enumerate(steps, start=1):
        event = Event.of("run-x", len(events), T0 + timedelta(milliseconds=7 * n), _payload(step, n))
        try:
            state.apply(event)
        except CorruptEvent:
            state = RunState.from_events(events)  # a refused event leaves the fold as it was
            assert state is not None
            continue
        events.append(event)
    assert_agrees(events)
