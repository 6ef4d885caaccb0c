"""`RunJournal.flush`: one commit at a time; a caller returns once what it recorded is durable."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from eudaimon.core.errors import JournalError
from eudaimon.core.events import Event, RunCompleted, RunStarted
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.stores.base import Fence, Snapshot
from support.stores import BatchRecordingStore


class SlowStore(BatchRecordingStore):
    """Appends after a pause, noting how many appends overlap (and, as its base, each batch)."""

    def __init__(self) -> None:
        super().__init__()
        self.active = 0
        self.most_active = 0

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        await asyncio.sleep(0.01)
        try:
            await super().append(run_id, expected_seq, events, snapshot, fence=fence)
        finally:
            self.active -= 1


async def test_concurrent_flushes_commit_one_at_a_time_and_each_waits_for_its_events() -> None:
    """Invariant: flushes never overlap; a flush called while another commits returns only after
    the events recorded before it are committed, and an empty flush returns at once."""
    store = SlowStore()
    journal = RunJournal(store, RunState(run_id="r1"))
    journal.record(RunStarted(agent="a", input="hi", messages=()))
    first = asyncio.ensure_future(journal.flush())
    await asyncio.sleep(0)  # the first commit is in flight
    journal.record(RunCompleted(output="done"))
    second, third = asyncio.ensure_future(journal.flush()), asyncio.ensure_future(journal.flush())
    await asyncio.gather(first, second, third)
    assert store.most_active == 1
    assert store.batches == [["run_started"], ["run_completed"]]
    assert journal.committed_seq == 2
    await journal.flush()
    assert len(store.batches) == 2


async def test_a_cancelled_waiter_does_not_stop_the_others() -> None:
    """Invariant: cancelling a caller that waits for another's commit leaves later commits intact."""
    store = SlowStore()
    journal = RunJournal(store, RunState(run_id="r1"))
    journal.record(RunStarted(agent="a", input="hi", messages=()))
    first = asyncio.ensure_future(journal.flush())
    await asyncio.sleep(0)
    journal.record(RunCompleted(output="done"))
    waiter = asyncio.ensure_future(journal.flush())
    await asyncio.sleep(0)
    waiter.cancel()
    await first
    await journal.flush()
    assert store.batches == [["run_started"], ["run_completed"]]


async def test_a_commit_cut_short_leaves_the_journal_refusing_appends() -> None:
    """Invariant: once a commit's task is cancelled while the store had its batch, whether it
    landed is unknown, so the journal refuses to append after it (a batch numbered after an
    unknown one would leave a gap or collide); a reopened journal reads what landed."""
    store = SlowStore()
    journal = RunJournal(store, RunState(run_id="r1"))
    journal.record(RunStarted(agent="a", input="hi", messages=()))
    commit = asyncio.ensure_future(journal.flush())
    await asyncio.sleep(0)  # the store has the batch
    commit.cancel()
    with pytest.raises(asyncio.CancelledError):
        await commit
    assert journal.in_doubt
    journal.record(RunCompleted(output="done"))
    with pytest.raises(JournalError, match="cut short"):
        await journal.flush()
    assert await store.load("r1") == []  # the cut fell before this store wrote anything
