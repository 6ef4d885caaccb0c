"""A run that has only its `run_queued` (seq 0) is a run like any other to every reader.

The fold gives it status `queued`; the stores keep it and summarise it (agent, thread); it
can be read at seq 0 (time travel), cancelled, and, once started, forked; the thread snapshot
does not count a run cancelled before it began; `resume` starts it in its turn and no sooner.
Events out of place around it are refused, and an unknown type is still an error.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from eudaimon import Agent
from eudaimon.core.codec import event_from_dict, event_to_dict
from eudaimon.core.errors import Cancelled, CorruptEvent, InvalidOperation, UnknownEventType
from eudaimon.core.events import Event, ModelCalled, RunCancelled, RunQueued, RunStarted
from eudaimon.core.messages import Message
from eudaimon.core.state import RunState, Status
from eudaimon.memory import JournalMemory
from eudaimon.models import ScriptedModel
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.queued import QueuedBehind, enqueue, run_ahead
from eudaimon.runtime.process.threads import hold_thread, thread_state
from eudaimon.stores import EventStore, MemoryStore

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
QUEUED = RunQueued(agent="bank", input="pay 5 to ALICE", thread_id="t1", memory_thread="t1", principal="alice")


def _at(seq: int, data: object) -> Event:
    return Event.of("r1", seq, T0 + timedelta(seconds=seq), data)  # type: ignore[arg-type]


def _started() -> RunStarted:
    return RunStarted(agent="bank", input="pay 5 to ALICE", messages=(Message.user("pay 5 to ALICE"),), thread_id="t1")


def test_the_fold_of_a_queued_run() -> None:
    queued = RunState.from_events([_at(0, QUEUED)])
    assert queued is not None
    assert (queued.status, queued.agent, queued.input, queued.thread_id) == (Status.QUEUED, "bank", QUEUED.input, "t1")
    assert (queued.principal, queued.started, queued.messages, queued.next_seq) == ("alice", False, [], 1)
    assert not queued.status.is_terminal and not queued.status.is_paused
    running = RunState.from_events([_at(0, QUEUED), _at(1, _started())])
    assert running is not None and running.status is Status.RUNNING and running.started
    assert running.principal == "alice" and [m.content for m in running.messages] == ["pay 5 to ALICE"]
    cancelled = RunState.from_events([_at(0, QUEUED), _at(1, RunCancelled(reason="no", by="bob"))])
    assert cancelled is not None and cancelled.status is Status.CANCELLED and not cancelled.started


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([_at(0, _started()), _at(1, QUEUED)], id="run_queued-after-the-start"),
        pytest.param(
            [_at(0, QUEUED), _at(1, ModelCalled(step=1, request_id="x", message=Message.assistant("hi")))],
            id="a-step-before-run_started",
        ),
        pytest.param([_at(0, _started()), _at(1, _started())], id="run_started-twice"),
        pytest.param([_at(0, QUEUED), _at(1, _started()), _at(2, _started())], id="run_started-twice-after-queued"),
    ],
)
def test_events_out_of_place_are_corrupt(events: list[Event]) -> None:
    with pytest.raises(CorruptEvent):
        RunState.from_events(events)


def test_run_queued_round_trips_and_unknown_types_stay_errors() -> None:
    row = event_to_dict(_at(0, QUEUED))
    assert row["type"] == "run_queued" and row["principal"] == "alice"
    assert event_from_dict(row) == _at(0, QUEUED)
    assert event_from_dict({k: v for k, v in row.items() if k not in ("principal", "request")}).data.principal is None
    with pytest.raises(UnknownEventType, match="run_waiting"):
        event_from_dict({**row, "type": "run_waiting"})


async def test_stores_keep_a_queued_run_and_summarise_it(store: EventStore) -> None:
    await store.append("r1", 0, [_at(0, QUEUED)])
    [summary] = await store.list_runs(thread_id="t1")
    assert (summary.agent, summary.thread_id, summary.event_count, summary.last_event_type) == (
        "bank",
        "t1",
        1,
        "run_queued",
    )
    assert (await load_state(store, "r1")).status is Status.QUEUED
    await store.append("r1", 1, [_at(1, _started())])
    assert (await load_state(store, "r1")).status is Status.RUNNING
    assert (await load_state(store, "r1", at_seq=0)).status is Status.QUEUED  # time travel
    with pytest.raises(CorruptEvent):
        await store.append("r2", 0, [Event.of("r2", 0, T0, RunCancelled())])


async def test_a_queued_run_is_cancelled_and_not_counted_as_a_turn() -> None:
    store = MemoryStore()
    await enqueue(store, "r1", QUEUED)
    cancelled = await operations.cancel(store, "r1", reason="changed my mind", by="alice")
    assert cancelled is not None and cancelled.status is Status.CANCELLED
    assert (await thread_state(store, "t1")).turn_count == 0


async def test_a_run_that_was_queued_forks_from_its_start_keeping_its_seqs() -> None:
    store = MemoryStore()
    await enqueue(store, "r1", QUEUED)
    with pytest.raises(InvalidOperation, match="queued"):
        await operations.fork(store, "r1", 0)
    await store.append("r1", 1, [_at(1, _started())])
    with pytest.raises(InvalidOperation, match="seq 1 or later"):
        await operations.fork(store, "r1", 0)
    child = await operations.fork(store, "r1", 1, new_run_id="r2")
    events = await store.load(child)
    assert [e.type for e in events] == ["run_queued", "run_started"]
    state = await load_state(store, child)
    assert state.parent is not None and (state.parent.run_id, state.parent.seq) == ("r1", 1)
    assert state.status is Status.RUNNING and not state.uses_memory


def _agent(store: EventStore, *answers: str) -> Agent:
    return Agent(ScriptedModel(list(answers)), name="bank", store=store)


async def test_resume_starts_a_queued_run_with_the_thread_history_as_it_is_then() -> None:
    store = MemoryStore()
    agent = _agent(store, "first answer", "second answer")
    await enqueue(store, "r2", RunQueued(agent="bank", input="second", thread_id="t1", memory_thread="t1"))
    assert await run_ahead(store, await load_state(store, "r2")) is None
    first = await agent.prompt("first", thread_id="t1")  # the thread moved on while r2 was queued
    assert first.text() == "first answer"
    second = await agent.resume("r2")
    assert second.status == "completed" and second.text() == "second answer"
    sent = [m.content for m in (await load_state(store, "r2")).messages]
    assert sent == ["first", "first answer", "second", "second answer"]
    assert (await thread_state(store, "t1")).turn_count == 2


async def test_a_queued_run_does_not_start_before_the_runs_queued_ahead_of_it() -> None:
    store = MemoryStore()
    agent = _agent(store, "one", "two")
    await enqueue(store, "r1", RunQueued(agent="bank", input="one", thread_id="t1", memory_thread="t1"))
    await enqueue(store, "r2", RunQueued(agent="bank", input="two", thread_id="t1", memory_thread="t1"))
    with pytest.raises(QueuedBehind) as behind:
        await agent.resume("r2")
    assert behind.value.ahead == "r1"
    assert (await load_state(store, "r2")).status is Status.QUEUED
    assert (await agent.resume("r1")).text() == "one"
    assert (await agent.resume("r2")).text() == "two"


async def test_a_queued_run_waiting_for_its_thread_is_cancelled_by_its_token() -> None:
    store = MemoryStore()
    agent = _agent(store, "never")
    await enqueue(store, "r1", RunQueued(agent="bank", input="one", thread_id="t1", memory_thread="t1"))
    busy = await hold_thread(store, "t1")  # another process's run holds the thread
    token = CancellationToken()
    waiting = asyncio.ensure_future(agent.resume("r1", cancel=token))
    token.cancel("not needed any more", by="alice")
    with pytest.raises(Cancelled, match="not needed any more"):
        await waiting
    await busy.release()
    state = await load_state(store, "r1")
    assert state.status is Status.CANCELLED and not state.started


async def test_journal_memory_reads_the_thread_past_its_queued_runs() -> None:
    """Bug: JournalMemory took the newest run of the thread, a queued one with no transcript
    (the very run being started), and sent an empty history."""
    store = MemoryStore()
    agent = Agent(
        ScriptedModel(["first answer", "second answer"]), name="bank", store=store, memory=JournalMemory(store)
    )
    await agent.prompt("first", thread_id="t1")
    await enqueue(store, "r2", RunQueued(agent="bank", input="second", thread_id="t1", memory_thread="t1"))
    await enqueue(store, "r3", RunQueued(agent="bank", input="third", thread_id="t1", memory_thread="t1"))
    await agent.resume("r2")
    sent = [m.content for m in (await load_state(store, "r2")).messages]
    assert sent == ["first", "first answer", "second", "second answer"]
