"""`MemoryStore`: the journal in a dict, for tests and throwaway agents."""

from __future__ import annotations

import time
from collections.abc import Sequence

from eudaimon.core.errors import ConcurrencyConflict, LeaseHeld
from eudaimon.core.events import Event
from eudaimon.stores.base import Lease, RunSummary, Snapshot, check_batch, summary_fields


class MemoryStore:
    """Keeps every run's events in process memory; lost when the process ends."""

    def __init__(self) -> None:
        self._events: dict[str, list[Event]] = {}
        self._summaries: dict[str, RunSummary] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._snapshots: dict[str, Snapshot] = {}

    async def append(
        self, run_id: str, expected_seq: int, events: Sequence[Event], snapshot: Snapshot | None = None
    ) -> None:
        if not events:
            return
        journal = self._events.get(run_id)
        actual = len(journal) if journal is not None else 0
        if expected_seq != actual:
            raise ConcurrencyConflict(run_id, expected_seq, actual)
        check_batch(run_id, expected_seq, events)
        if journal is None:
            journal = self._events[run_id] = []
            agent, thread_id = summary_fields(events)
            created = events[0].at
        else:
            previous = self._summaries[run_id]
            agent, thread_id, created = previous.agent, previous.thread_id, previous.created_at
        journal.extend(events)
        last = events[-1]
        self._summaries[run_id] = RunSummary(run_id, agent, thread_id, created, last.at, len(journal), last.type)
        if snapshot is not None:
            await self.save_snapshot(snapshot)

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        return list(self._events.get(run_id, ())[after_seq + 1 :])

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        runs = [s for s in self._summaries.values() if thread_id is None or s.thread_id == thread_id]
        runs.sort(key=lambda s: s.updated_at, reverse=True)
        return runs[:limit]

    async def delete_run(self, run_id: str) -> None:
        self._events.pop(run_id, None)
        self._summaries.pop(run_id, None)
        self._snapshots.pop(f"run:{run_id}", None)

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        now = time.monotonic()
        holder = self._leases.get(name)
        if holder is not None and holder[0] != owner and holder[1] > now:
            raise LeaseHeld(name, holder[0], holder[1] - now)
        self._leases[name] = (owner, now + ttl_s)
        return Lease(name, owner, ttl_s)

    async def release_lease(self, name: str, owner: str) -> None:
        holder = self._leases.get(name)
        if holder is not None and holder[0] == owner:
            del self._leases[name]

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        kept = self._snapshots.get(snapshot.key)
        if kept is None or kept.version <= snapshot.version:
            self._snapshots[snapshot.key] = snapshot

    async def load_snapshot(self, key: str) -> Snapshot | None:
        return self._snapshots.get(key)

    async def delete_snapshots(self) -> int:
        count = len(self._snapshots)
        self._snapshots.clear()
        return count

    async def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"MemoryStore(runs={len(self._events)})"
