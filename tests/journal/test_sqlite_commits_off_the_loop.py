"""`SqliteStore` never commits on the event loop's thread, and shares each commit among the runs
that append meanwhile.

A commit is held on the worker's thread (`_worker.CommitWorker._commit`, the seam the store
leaves for this) until the test lets it go, so what the loop does meanwhile is observed, not
timed: with a commit on the loop's thread, the loop could not run until the commit ended.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from eudaimon.core.errors import ConcurrencyConflict, JournalError, LeaseLost
from eudaimon.stores.base import Fence
from eudaimon.stores.sqlite import SqliteStore, _worker

HANG_GUARD_S = 10.0
"""Only so that a broken store fails the test instead of hanging it; nothing is timed."""


class _HeldCommits(_worker.CommitWorker):
    """Holds every COMMIT on the worker's thread while `held` is set, saying when one waits."""

    held: ClassVar[threading.Event] = threading.Event()
    release: ClassVar[threading.Event] = threading.Event()
    waiting: ClassVar[threading.Event] = threading.Event()
    commit_threads: ClassVar[list[int]] = []

    def _commit(self, conn: sqlite3.Connection) -> None:
        self.commit_threads.append(threading.get_ident())
        if self.held.is_set():
            self.waiting.set()
            released = self.release.wait(HANG_GUARD_S)
            self.waiting.clear()
            assert released, "the test never let the commit go"
        super()._commit(conn)


class _HeldStore(SqliteStore):
    _worker_type = _HeldCommits


@pytest.fixture
async def held(tmp_path: Path) -> AsyncIterator[_HeldStore]:
    _HeldCommits.held.clear()
    _HeldCommits.release.clear()
    _HeldCommits.waiting.clear()
    _HeldCommits.commit_threads.clear()
    store = _HeldStore(tmp_path / "held.db")
    await store.list_runs()  # the schema exists before any commit is held
    try:
        yield store
    finally:
        _HeldCommits.release.set()
        await store.close()


async def _until(flag: threading.Event) -> None:
    """Await `flag` on the loop without blocking it: the loop must be free to run this."""
    async with asyncio.timeout(HANG_GUARD_S):
        while not flag.is_set():
            await asyncio.sleep(0.001)


async def test_the_loop_runs_on_while_a_commit_waits_on_the_disk(held: _HeldStore, samples: Any) -> None:
    """Invariant: a run appending alone (the case that used to commit on the caller's thread)
    commits on the store's worker: while its COMMIT waits, the loop runs other coroutines, and
    the append completes once the commit does."""
    events = samples.make_events("r", [samples.started(), samples.attempt(1)])
    await held.append("r", 0, events[:1])
    _HeldCommits.held.set()
    appending = asyncio.ensure_future(held.append("r", 1, events[1:]))

    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while not appending.done():
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(tick())
    await _until(_HeldCommits.waiting)  # the loop got here while the commit waits
    assert not appending.done(), "the append returned before its commit"
    ticks_while_held = ticks
    await asyncio.sleep(0)
    assert ticks > ticks_while_held, "other coroutines ran while the commit was held"

    _HeldCommits.release.set()
    await appending
    await ticking
    assert await held.load("r") == events
    assert threading.get_ident() not in _HeldCommits.commit_threads, "a COMMIT ran on the loop's thread"


async def test_leases_and_reads_wait_for_a_held_commit_off_the_loop(held: _HeldStore, samples: Any) -> None:
    """Invariant: a lease (committed without an fsync) and a read queued behind a commit in
    flight wait on the worker too, not on the loop: the loop runs on until the commit ends."""
    await held.append("r", 0, samples.make_events("r", [samples.started()]))
    _HeldCommits.held.set()
    appending = asyncio.ensure_future(held.append("r", 1, samples.make_events("r", [samples.attempt(1)], start=1)))
    await _until(_HeldCommits.waiting)
    leasing = asyncio.ensure_future(held.acquire_lease("run:r", "me", 30))
    loading = asyncio.ensure_future(held.load("r"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not (leasing.done() or loading.done() or appending.done())
    _HeldCommits.release.set()
    await appending
    assert (await leasing).owner == "me"
    assert [e.seq for e in await loading] == [0, 1]


async def test_appends_of_many_runs_during_a_commit_share_the_next_and_fail_alone(
    held: _HeldStore, samples: Any
) -> None:
    """Invariant: the appends of several runs that arrive while a commit is in flight go into
    the next single transaction (one COMMIT), and each gets its own outcome: one run's refused
    append (a stale seq, a fence whose lease another owner holds) fails only that run's."""
    await held.acquire_lease("run:c", "someone-else", 30)
    await held.acquire_lease("run:a", "me", 30)
    for run in ("a", "b", "c", "d", "x"):
        await held.append(run, 0, samples.make_events(run, [samples.started(run)]))
    _HeldCommits.held.set()
    # The same run again, the worker idle: the case that used to commit on the loop's thread.
    first = asyncio.ensure_future(held.append("x", 1, samples.make_events("x", [samples.attempt(1)], start=1)))
    await _until(_HeldCommits.waiting)
    commits = held.commit_count

    def next_of(run: str) -> list[Any]:
        return samples.make_events(run, [samples.attempt(1)], start=1)

    pending = [
        asyncio.ensure_future(held.append("a", 1, next_of("a"), fence=Fence("run:a", "me"))),
        asyncio.ensure_future(held.append("b", 1, next_of("b"))),
        asyncio.ensure_future(held.append("c", 1, next_of("c"), fence=Fence("run:c", "me"))),
        asyncio.ensure_future(held.append("d", 7, samples.make_events("d", [samples.attempt(7)], start=7))),
        asyncio.ensure_future(held.append("e", 0, samples.make_events("e", [samples.started("e")]))),
    ]
    for _ in range(5):
        await asyncio.sleep(0)  # every append is queued behind the held commit
    _HeldCommits.held.clear()
    _HeldCommits.release.set()
    await first
    a, b, c, d, e = await asyncio.gather(*pending, return_exceptions=True)

    assert held.commit_count == commits + 2  # the held one, then every queued append in one
    assert (a, b, e) == (None, None, None)
    assert isinstance(c, LeaseLost)
    assert isinstance(d, ConcurrencyConflict)
    assert [ev.seq for ev in await held.load("a")] == [0, 1]
    assert [ev.seq for ev in await held.load("b")] == [0, 1]
    assert [ev.seq for ev in await held.load("c")] == [0]
    assert [ev.seq for ev in await held.load("d")] == [0]
    assert [ev.seq for ev in await held.load("e")] == [0]


async def test_stores_of_one_process_on_one_file_share_one_commit(held: _HeldStore, samples: Any) -> None:
    """Invariant: group commit is shared by every run of the process on the file, whichever
    `SqliteStore` object each run uses: appends through two stores on one file, queued behind
    a commit in flight, land in one COMMIT (each store counting it); closing one store leaves
    the other working."""
    other = _HeldStore(held.path)
    try:
        await held.append("x", 0, samples.make_events("x", [samples.started()]))
        _HeldCommits.held.set()
        first = asyncio.ensure_future(held.append("x", 1, samples.make_events("x", [samples.attempt(1)], start=1)))
        await _until(_HeldCommits.waiting)
        commits = len(_HeldCommits.commit_threads)
        mine, theirs = held.commit_count, other.commit_count
        pending = [
            asyncio.ensure_future(held.append("p", 0, samples.make_events("p", [samples.started("p")]))),
            asyncio.ensure_future(other.append("q", 0, samples.make_events("q", [samples.started("q")]))),
        ]
        for _ in range(5):
            await asyncio.sleep(0)
        _HeldCommits.held.clear()
        _HeldCommits.release.set()
        await first
        await asyncio.gather(*pending)
        assert len(_HeldCommits.commit_threads) == commits + 1  # both stores' appends in one COMMIT
        assert (held.commit_count, other.commit_count) == (mine + 2, theirs + 1)
    finally:
        await other.close()
    with pytest.raises(JournalError, match="closed"):
        await other.load("q")
    assert [e.seq for e in await held.load("q")] == [0]
    await held.append("p", 1, samples.make_events("p", [samples.attempt(1)], start=1))
