"""`RunJournal`: a run's state together with the events not yet committed.

Every event goes through `record`, which folds it into the state at once (the loop decides on
what it has recorded) and buffers it; `flush` commits the buffer in one atomic append. The
loop flushes exactly where durability matters: before a model call and before a tool runs,
and when the run stops. A failed flush (another process appended first) ends this driver.
"""

from __future__ import annotations

import asyncio

from eudaimon.core.events import Event, EventData, RunStarted
from eudaimon.core.state import RunState
from eudaimon.runtime.clock import now
from eudaimon.stores.base import EventStore


class RunJournal:
    def __init__(self, store: EventStore, state: RunState) -> None:
        self.store = store
        self.state = state
        self._committed_seq = state.next_seq
        self._buffer: list[Event] = []
        self._flushing = asyncio.Lock()

    @classmethod
    def start(cls, store: EventStore, run_id: str, started: RunStarted) -> RunJournal:
        journal = cls(store, RunState(run_id=run_id))
        journal.record(started)
        return journal

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def has_uncommitted(self) -> bool:
        return bool(self._buffer)

    def record(self, data: EventData) -> Event:
        event = Event(self.state.run_id, self.state.next_seq, now(), data.type, data)
        self.state.apply(event)
        self._buffer.append(event)
        return event

    async def flush(self) -> None:
        """Commit what is buffered. Concurrent callers queue; events recorded meanwhile ride along."""
        async with self._flushing:
            if not self._buffer:
                return
            batch, self._buffer = self._buffer, []
            await self.store.append(self.state.run_id, self._committed_seq, batch)
            self._committed_seq += len(batch)
