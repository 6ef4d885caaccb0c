"""A run's state as its journal holds it: the latest snapshot, and the events after it folded in.

Everything that reads a run from outside its loop starts here (operations, timers, queues,
threads, the tree of runs, the CLI and the server), so it stands alone: it needs a store and
the fold, nothing of the runtime.
"""

from __future__ import annotations

from eudaimon.core.codec import state_from_json
from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import RunState
from eudaimon.stores.base import EventStore


async def load_state(store: EventStore, run_id: str, at_seq: int | None = None) -> RunState:
    """Fold a run's journal up to and including `at_seq` (all of it when None).

    The latest snapshot is used when it is not past `at_seq`; only the events after it are
    read. A missing or stale snapshot just means folding from the start.
    """
    if at_seq is not None and at_seq < 0:
        raise ValueError(f"at_seq must be 0 or more, got {at_seq}")
    state: RunState | None = None
    snapshot = await store.load_snapshot(f"run:{run_id}")
    if snapshot is not None and (at_seq is None or snapshot.version <= at_seq):
        state = state_from_json(snapshot.data)
    events = await store.load(run_id, after_seq=state.next_seq - 1 if state is not None else -1)
    if at_seq is not None:
        events = [e for e in events if e.seq <= at_seq]
    if state is None:
        state = RunState.from_events(events)
        if state is None:
            raise RunNotFound(run_id)
        return state
    for event in events:
        state.apply(event)
    return state
