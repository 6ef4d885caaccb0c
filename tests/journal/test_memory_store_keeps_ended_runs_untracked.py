"""The runs `MemoryStore` holds that ended longest ago hold nothing the garbage collector
walks (not even a wrapper object), and read back the same.

A process that keeps thousands of ended runs in memory pays for every object they hold at each
full collection, which stops the whole process (seconds at 10,000 runs). So all but the
`KEEP_DECODED` runs that ended last are kept encoded; loading them, listing them, and a run that
goes on after its end (a resume) see exactly the events that were appended.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta

import pytest

from eudaimon.core.events import Event, ModelCalled, RunCompleted, RunStarted, ToolCompleted, ToolStarted
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.stores import MemoryStore, memory


def _journal(run_id: str) -> list[Event]:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    call = ToolCall("c1", "lookup", {"key": "a", "n": 2})
    data = [
        RunStarted(agent="a", input="hi", messages=(Message.user("hi"),), thread_id="t"),
        ModelCalled(step=0, request_id="q0", message=Message.assistant("", tool_calls=[call]), usage=Usage(3, 4)),
        ToolStarted(call_id="c1", tool="lookup", idempotency_key="k"),
        ToolCompleted(call_id="c1", tool="lookup", output="value"),
        RunCompleted(output="done"),
    ]
    return [Event.of(run_id, seq, at + timedelta(seconds=seq), d) for seq, d in enumerate(data)]


async def test_an_ended_run_is_kept_untracked_and_reads_back_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "KEEP_DECODED", 0)
    store = MemoryStore()
    events = _journal("r1")
    await store.append("r1", 0, events[:2])
    await store.append("r1", 2, events[2:])
    gc.collect()  # tuples of untracked values are untracked by a collection: the rows by this one,
    gc.collect()  # the tuple of rows by the next at the latest (it may be looked at before its rows)
    kept = store._events["r1"]
    assert not isinstance(kept, list)
    assert not gc.is_tracked(kept)  # nor anything in it: a tracked wrapper would be one object a run
    assert await store.load("r1") == events
    assert await store.load("r1", after_seq=2) == events[3:]
    (summary,) = await store.list_runs()
    assert (summary.event_count, summary.last_event_type, summary.updated_at) == (5, "run_completed", events[-1].at)


async def test_only_the_runs_that_ended_last_stay_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "KEEP_DECODED", 2)
    store = MemoryStore()
    for n in range(5):
        await store.append(f"r{n}", 0, _journal(f"r{n}"))
    kept = {run_id: isinstance(events, list) for run_id, events in store._events.items()}
    assert kept == {"r0": False, "r1": False, "r2": False, "r3": True, "r4": True}
    assert [await store.load(f"r{n}") for n in range(5)] == [_journal(f"r{n}") for n in range(5)]


async def test_a_run_that_goes_on_after_its_end_appends_after_its_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "KEEP_DECODED", 0)
    store = MemoryStore()
    events = _journal("r2")
    await store.append("r2", 0, events)
    more = Event.of("r2", 5, events[-1].at, ModelCalled(step=1, request_id="q1", message=Message.assistant("again")))
    await store.append("r2", 5, [more])
    assert await store.load("r2") == [*events, more]
