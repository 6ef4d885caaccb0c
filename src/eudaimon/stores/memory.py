"""`MemoryStore`: the journal in a dict, for tests and throwaway agents."""

from __future__ import annotations

from collections.abc import Sequence

from eudaimon.core.errors import ConcurrencyConflict
from eudaimon.core.events import Event
from eudaimon.stores.base import RunSummary, check_batch, summary_fields


class MemoryStore:
    """Keeps every run's events in process memory; lost when the process ends."""

    def __init__(self) -> None:
        self._events: dict[str, list[Event]] = {}
        self._summaries: dict[str, RunSummary] = {}

    async def append(self, run_id: str, expected_seq: int, events: Sequence[Event]) -> None:
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
        self._summaries[run_id] = RunSummary(
            run_id, agent, thread_id, created, events[-1].at, len(journal), events[-1].type
        )

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        return list(self._events.get(run_id, ())[after_seq + 1 :])

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        runs = [s for s in self._summaries.values() if thread_id is None or s.thread_id == thread_id]
        runs.sort(key=lambda s: s.updated_at, reverse=True)
        return runs[:limit]

    async def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"MemoryStore(runs={len(self._events)})"
