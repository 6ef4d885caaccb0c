"""Queued runs: journaled when accepted, started later, one at a time and in order per thread.

A server answers a start only once the run is in the journal. A run whose thread is busy
cannot have its `run_started` yet (its history is the thread's after the runs before it), so
its first event is `run_queued` (agent, input, thread, who asked) and `run_started` follows
at seq 1 when its turn comes. Whoever drives it then, this process or another after a restart,
reads everything it needs from the journal.

A thread's turn order is the order its runs were queued in (`created_at`, then run id). A
queued run waits for the earlier queued runs of its thread, and for any of the thread's
conversation runs that is running (a run resumed after a crash holds no thread lease, yet the
next turn must see its answer). Forks and child runs are not the thread's conversation (they
never feed its memory), so they hold no one up; nor do paused runs, as a prompt does not wait
for a run that waits for a human.
"""

from __future__ import annotations

from datetime import datetime

from eudaimon.core.errors import QueuedBehind
from eudaimon.core.events import RunQueued
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore, RunSummary

_ALL = 1_000_000_000
__all__ = ["QueuedBehind", "enqueue", "holds_the_turn", "is_queued", "queued_on", "run_ahead", "turn_order"]


async def enqueue(store: EventStore, run_id: str, queued: RunQueued) -> RunState:
    """Journal `queued` as the first event of `run_id`.

    Raises:
        ConcurrencyConflict: the run id is taken (an identical start that won the race, or
            another run): nothing was written.
    """
    journal = RunJournal(store, RunState(run_id=run_id), snapshot_every=0)
    journal.record(queued)
    await journal.flush()
    return journal.state


def is_queued(summary: RunSummary) -> bool:
    """Whether the run has only its `run_queued`: known from the summary, without a fold."""
    return summary.event_count == 1 and summary.last_event_type == RunQueued.type


def turn_order(summary: RunSummary) -> tuple[datetime, str]:
    return summary.created_at, summary.run_id


def holds_the_turn(state: RunState) -> bool:
    """A running run of the thread's conversation: the next turn waits for its answer."""
    return state.status is Status.RUNNING and state.uses_memory and state.parent is None and state.parent_call is None


async def queued_on(store: EventStore, thread_id: str) -> list[RunSummary]:
    """The thread's queued runs, in turn order."""
    runs = await store.list_runs(thread_id=thread_id, limit=_ALL)
    return sorted((s for s in runs if is_queued(s)), key=turn_order)


async def run_ahead(store: EventStore, state: RunState) -> str | None:
    """The run `state`'s run waits for before it may start, or None when its turn has come."""
    thread_id = state.thread_id
    if thread_id is None:
        return None
    runs = await store.list_runs(thread_id=thread_id, limit=_ALL)
    mine = next((turn_order(s) for s in runs if s.run_id == state.run_id), None)
    for summary in sorted(runs, key=turn_order):
        if summary.run_id == state.run_id or summary.is_finished:
            continue
        if is_queued(summary):
            if mine is not None and turn_order(summary) < mine:
                return summary.run_id
            continue
        if holds_the_turn(await load_state(store, summary.run_id)):
            return summary.run_id
    return None
