"""Durable waits: a tool raising `RetryAfter` leaves its run `waiting` with a `wake_at`, holding
no process; when due, whoever looks journals `tool_woke` and the call runs again with the same
idempotency key and the next attempt. `max_waits` bounds it; cancel applies while it sleeps."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from _time_support import WAIT_S, Opener, fetcher

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.events import ToolStarted, ToolWaiting
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.process import operations, timers
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import index


async def test_a_retry_after_waits_durably_then_runs_again_with_the_same_key(open_store: Opener) -> None:
    """Invariant: the run is `waiting` (index and fold) with `wake_at`; nothing fires before it;
    after it a sweep from another store journals `tool_woke`, and the resumed run runs the call
    as attempt 2 with attempt 1's idempotency key."""
    store, seen = open_store(), []
    agent = fetcher(store, seen)
    paused = await agent.prompt("get the report")
    state = await load_state(store, paused.run_id)
    assert state.status == "waiting"
    [waited] = [e.data for e in await store.load(paused.run_id) if isinstance(e.data, ToolWaiting)]
    assert waited.attempt == 1 and waited.reason == "the report is being built"
    row = await index.run_row(store, paused.run_id)
    assert row is not None and row.status == "waiting" and row.due_at == waited.wake_at
    assert await timers.fire_due(store) == []

    await asyncio.sleep(max(0.0, (waited.wake_at - datetime.now(UTC)).total_seconds()) + 0.05)
    [fired] = await timers.fire_due(open_store())
    done = await agent.resume(paused.run_id)

    assert fired.state.status == "running"
    assert done.status == "completed"
    assert seen == ["report q3 at attempt 2"]
    starts = [e.data for e in await store.load(paused.run_id) if isinstance(e.data, ToolStarted)]
    assert [s.attempt for s in starts] == [1, 2]
    assert starts[0].idempotency_key == starts[1].idempotency_key


async def test_a_resume_after_the_wake_time_runs_the_call_without_a_sweep(open_store: Opener) -> None:
    """Invariant: resuming a waiting run whose time came journals `tool_woke` itself and goes on."""
    store, seen = open_store(), []
    agent = fetcher(store, seen)
    paused = await agent.prompt("get the report")
    early = await agent.resume(paused.run_id)
    assert early.status == "waiting"  # not due: the resume stops again, holding nothing
    await asyncio.sleep(WAIT_S + 0.1)

    done = await agent.resume(paused.run_id)

    assert done.status == "completed" and seen == ["report q3 at attempt 2"]


async def test_max_waits_bounds_how_often_a_call_waits(open_store: Opener) -> None:
    """Invariant: with `max_waits=1`, the call's second `RetryAfter` is an error result the model
    reads, not a second wait."""
    store, seen = open_store(), []
    agent = fetcher(store, seen, waits=5, max_waits=1)
    paused = await agent.prompt("get the report")
    await asyncio.sleep(WAIT_S + 0.1)

    done = await agent.resume(paused.run_id)

    assert done.status == "completed"
    assert len(seen) == 1 and "max_waits=1" in seen[0]
    waits = [e for e in await store.load(paused.run_id) if isinstance(e.data, ToolWaiting)]
    assert len(waits) == 1


async def test_a_waiting_run_can_be_cancelled_and_then_nothing_fires(open_store: Opener) -> None:
    """Invariant: cancel applies while the call sleeps; its wake then fires nothing."""
    store = open_store()
    agent = fetcher(store, [])
    paused = await agent.prompt("get the report")

    cancelled = await operations.cancel(store, paused.run_id, reason="not needed", by="alice")
    await asyncio.sleep(WAIT_S + 0.1)

    assert cancelled is not None and cancelled.status == "cancelled"
    assert await timers.fire_due(store) == []
    row = await index.run_row(store, paused.run_id)
    assert row is not None and row.status == "cancelled" and row.due_at is None


async def test_a_child_runs_wait_makes_its_parents_call_wait(open_store: Opener) -> None:
    """Invariant: an agent used as a tool whose own call raised `RetryAfter` leaves the parent
    run `waiting` too; resumed after the wake time, the parent resumes the child, whose call runs
    again, and both complete."""
    store, seen = open_store(), []
    child = fetcher(store, seen)

    def delegate(request: ChatRequest) -> Message | str:
        if request.messages[-1].role == "tool":
            return "parent done: " + request.messages[-1].content
        return Message.assistant(tool_calls=[ToolCall("d", "fetcher", '{"input": "get it"}')])

    parent = Agent(FunctionModel(delegate), tools=[child.as_tool()], store=store, name="boss")
    paused = await parent.prompt("go")
    assert paused.status == "waiting"
    await asyncio.sleep(WAIT_S + 0.1)

    done = await parent.resume(paused.run_id)

    assert done.status == "completed", done
    assert seen == ["report q3 at attempt 2"]
