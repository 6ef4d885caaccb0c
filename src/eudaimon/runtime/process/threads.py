"""Threads: one run at a time per thread, and the thread snapshot derived from its runs.

The snapshot (`ThreadState`, DESIGN §7) is cached in the store beside the ids of the runs it
has counted. Reading it reconciles the cache with the store's list of the thread's finished
runs and folds in any it has not counted, so a lost or stale cache costs time, never truth.
"""

from __future__ import annotations

import json

from eudaimon.memory.thread import ThreadState
from eudaimon.runtime.loop.clock import now
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore, Snapshot


def snapshot_key(thread_id: str) -> str:
    return f"thread:{thread_id}"


async def hold_thread(
    store: EventStore, thread_id: str, *, wait: bool = True, ttl_s: float | None = None
) -> LeaseKeeper:
    """Take the thread's lease: a second prompt on the thread waits (or raises `LeaseHeld`).
    The caller releases the keeper returned."""
    keeper = LeaseKeeper(store, snapshot_key(thread_id), ttl_s=ttl_s)
    await keeper.acquire(wait=wait)
    return keeper


async def thread_state(store: EventStore, thread_id: str, *, cache: bool = True) -> ThreadState:
    """The thread's snapshot, with every finished run counted once; cached back when it changed
    (unless not `cache`: a reader that may not write, such as `eudaimon threads show`).

    Runs do not write it as they end (that would cost each run a commit): it is brought up to
    date, and cached, when it is read.
    """
    cached = await store.load_snapshot(snapshot_key(thread_id))
    state, counted = _parse(cached.data) if cached is not None else (None, [])
    runs = sorted(await store.list_runs(thread_id=thread_id, limit=1_000_000_000), key=lambda r: r.created_at)
    if state is None:
        created = runs[0].created_at if runs else now()
        state, counted = ThreadState(thread_id=thread_id, created_at=created), []
    seen = set(counted)
    for summary in runs:
        if not summary.is_finished or summary.run_id in seen:
            continue
        run = await load_state(store, summary.run_id)
        if run.started:  # a run cancelled while queued was never a turn of the thread
            state = state.record_run(run)
        counted.append(summary.run_id)
        seen.add(summary.run_id)
    if cache and (cached is None or len(counted) != cached.version):
        data = json.dumps({"thread": state.to_dict(), "runs": counted}, separators=(",", ":"))
        await store.save_snapshot(Snapshot(snapshot_key(thread_id), len(counted), data))
    return state


def _parse(data: str) -> tuple[ThreadState | None, list[str]]:
    try:
        doc = json.loads(data)
        return ThreadState.from_dict(doc["thread"]), [str(r) for r in doc["runs"]]
    except (ValueError, KeyError, TypeError):
        return None, []  # a cache we cannot read is rebuilt from the runs
