"""Firing what falls due in runs: approval deadlines (`approval_timed_out`) and durable waits
(`tool_woke`), from the journal alone, by whichever process looks.

Nothing is a timer in memory: a deadline and a wake are journaled (`approval_requested.deadline`,
`tool_waiting.wake_at`) and mirrored in the run index's due column, so any process with the
store (a server's sweeper, another server, a CLI) finds the runs due by now with one indexed
query and fires them. Exactly one process records each: the events are appended at the seq the
process read, so a second process (or a human's decision racing the deadline) loses on the
journal's sequence, reads again, and finds nothing left to fire.

A deadline that cancels the run (`on_approval_timeout="cancel"`) ends it, as `operations.cancel`
does, so it is written as a cancel is: under the run's lease, the commit fenced by it. A process
driving the run holds that lease and journals what is due itself when it next looks; a sweep that
finds the lease held leaves the run to it (or to its next tick, once the lease is free).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from eudaimon.core.due import due_events
from eudaimon.core.errors import ConcurrencyConflict, LeaseHeld
from eudaimon.core.events import EventData, RunCancelled
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.clock import now as utc_now
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.drivers import run_lease_name
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import index
from eudaimon.stores.base import EventStore


@dataclass(frozen=True, slots=True)
class Fired:
    """What one process fired in a run: the events it journaled, the run's state after them."""

    run_id: str
    events: tuple[EventData, ...]
    state: RunState


async def fire(store: EventStore, run_id: str, at: datetime | None = None) -> Fired | None:
    """Journal what is due in the run now; None when nothing is (another process fired it first,
    a human decided in time, or the run ended), when a deadline would cancel the run while
    another process holds its lease, or when an engine drives the run: a Temporal workflow keeps
    its own time with durable timers (`eudaimon.temporal._timers`) and is the run's only writer,
    so its deadlines and wakes are fired by it, never from outside."""
    while True:
        state = await load_state(store, run_id)
        if state.engine:  # driven by an engine (Temporal): its workflow would not learn of it
            return None
        events = due_events(state, at or utc_now())
        if not events:
            return None
        if any(isinstance(event, RunCancelled) for event in events):
            return await _cancel_under_lease(store, run_id, at)
        journal = RunJournal(store, state, snapshot_every=0)
        for event in events:
            journal.record(event)
        try:
            await journal.flush()
        except ConcurrencyConflict:
            continue  # another process appended first: read again, perhaps nothing is left
        return Fired(run_id, tuple(events), state)


async def _cancel_under_lease(store: EventStore, run_id: str, at: datetime | None) -> Fired | None:
    """Fire a deadline that cancels the run holding the run's lease, the commit fenced by it
    (a second process racing it finds the lease held, or, after, nothing left to fire)."""
    keeper = LeaseKeeper(store, run_lease_name(run_id))
    try:
        await keeper.acquire(wait=False)
    except LeaseHeld:
        return None  # its driver fires it at its next step, or the next sweep does
    try:
        while True:
            state = await load_state(store, run_id)  # read under the lease: what landed before it
            events = due_events(state, at or utc_now())
            if state.engine or not events:
                return None
            journal = RunJournal(store, state, snapshot_every=0)
            journal.fence = keeper.fence
            for event in events:
                journal.record(event)
            try:
                await journal.flush()
            except ConcurrencyConflict:
                continue  # a decision without the lease (an approval) landed first: read again
            return Fired(run_id, tuple(events), state)
    finally:
        await keeper.release()


async def due_runs(store: EventStore, at: datetime | None = None, limit: int = 1000) -> list[str]:
    """The ids of runs with a deadline or a wake at or before `at` (now), from the index."""
    rows = await index.query_runs(store, index.RunQuery(limit=limit, due_by=at or utc_now()))
    return [row.run_id for row in rows]


async def fire_due(store: EventStore, at: datetime | None = None, limit: int = 1000) -> list[Fired]:
    """Fire every run due by `at` (now): the sweep a server runs every second."""
    fired: list[Fired] = []
    for run_id in await due_runs(store, at, limit):
        done = await fire(store, run_id, at)
        if done is not None:
            fired.append(done)
    return fired
