"""What `SqliteStore` promises beyond the shared contract: a durable file, a lifecycle that does
not depend on one event loop, and commits a caller can count."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, JournalError, LeaseHeld
from eudaimon.stores import SqliteStore as ExportedSqliteStore
from eudaimon.stores import open_store
from eudaimon.stores.base import Snapshot
from eudaimon.stores.sqlite import SqliteStore, _worker


def test_store_serves_event_loops_one_after_another(tmp_path: Path, samples: Any) -> None:
    """Invariant: a store built outside any event loop works from several `asyncio.run` calls in
    turn (the CLI and `prompt_sync` do that): it is bound to no loop."""
    store = SqliteStore(tmp_path / "loops.db")
    events = samples.make_events("run-1", [samples.started(), samples.attempt(0)])

    asyncio.run(store.append("run-1", 0, events[:1]))
    asyncio.run(store.append("run-1", 1, events[1:]))

    assert asyncio.run(store.load("run-1")) == events
    asyncio.run(store.close())


async def test_journal_survives_reopening(tmp_path: Path, samples: Any) -> None:
    """Invariant: what one store committed, a new store on the same file reads (durability), and
    the reopened journal keeps fencing at the right seq."""
    db = tmp_path / "durable.db"
    events = samples.make_events("run-1", [samples.started("bot", "t"), samples.attempt(0)])
    first = SqliteStore(db)
    await first.append("run-1", 0, events)
    await first.close()

    second = SqliteStore(db)
    try:
        assert await second.load("run-1") == events
        assert [(s.run_id, s.event_count) for s in await second.list_runs()] == [("run-1", 2)]
        with pytest.raises(ConcurrencyConflict):
            await second.append("run-1", 1, samples.make_events("run-1", [samples.attempt(1)], start=1))
    finally:
        await second.close()


async def test_file_is_in_wal_mode(tmp_path: Path, samples: Any) -> None:
    """Invariant: the file uses WAL (readers never block the writer; other processes can read
    while a run appends). (Its directory must exist: `test_sqlite_paths.py`.)"""
    db = tmp_path / "runs.db"
    store = SqliteStore(db, synchronous="normal")
    try:
        await store.append("run-1", 0, samples.make_events("run-1", [samples.started()]))
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_one_append_is_one_commit_and_a_refused_one_is_none(tmp_path: Path, samples: Any) -> None:
    """Invariant: `commit_count` counts COMMITs: an append alone costs exactly one, a refused
    append (conflict, bad batch) costs none (no fsync spent on writing nothing)."""
    store = SqliteStore(tmp_path / "count.db")
    try:
        assert store.commit_count == 0
        await store.append("run-1", 0, samples.make_events("run-1", [samples.started(), samples.attempt(0)]))
        assert store.commit_count == 1
        with pytest.raises(ConcurrencyConflict):
            await store.append("run-1", 0, samples.make_events("run-1", [samples.started()]))
        await store.load("run-1")
        await store.list_runs()
        assert store.commit_count == 1
    finally:
        await store.close()


async def test_closed_store_refuses_use_with_a_clear_error(tmp_path: Path, samples: Any) -> None:
    """Invariant: after `close()` every method raises JournalError saying the store is closed
    (instead of hanging on a stopped thread); closing twice is harmless."""
    store = SqliteStore(tmp_path / "closed.db")
    await store.list_runs()
    await store.close()
    await store.close()

    for use in (
        store.load("run-1"),
        store.list_runs(),
        store.append("run-1", 0, samples.make_events("run-1", [samples.started()])),
        store.append("run-1", 0, []),
    ):
        with pytest.raises(JournalError, match="closed"):
            await use


async def test_close_finishes_appends_already_sent(tmp_path: Path, samples: Any) -> None:
    """Invariant: `close()` lets every request sent before it finish: no append is lost to a close."""
    db = tmp_path / "drain.db"
    store = SqliteStore(db)
    appends = [
        asyncio.ensure_future(store.append(f"run-{i}", 0, samples.make_events(f"run-{i}", [samples.started()])))
        for i in range(20)
    ]
    await asyncio.sleep(0)
    await store.close()
    await asyncio.gather(*appends)

    reopened = SqliteStore(db)
    try:
        assert len(await reopened.list_runs()) == 20
    finally:
        await reopened.close()


async def test_unusable_path_raises_journal_error(tmp_path: Path) -> None:
    """Invariant: a path SQLite cannot open is a JournalError naming the path, not a hang."""
    store = SqliteStore(tmp_path)  # a directory
    try:
        with pytest.raises(JournalError, match=str(tmp_path)):
            await store.list_runs()
    finally:
        await store.close()


def test_unknown_synchronous_is_a_configuration_error(tmp_path: Path) -> None:
    """Invariant: a durability setting other than 'full' or 'normal' is refused when the store is built."""
    with pytest.raises(ConfigurationError, match="synchronous"):
        SqliteStore(tmp_path / "x.db", synchronous="off")  # type: ignore[arg-type]


def test_repr_shows_the_path_and_the_url_opens_one(tmp_path: Path) -> None:
    """Invariant: the repr names the file (the first thing to check when runs go missing), and
    `sqlite:///…` URLs and `eudaimon.stores.SqliteStore` give this class."""
    store = SqliteStore(tmp_path / "runs.db")
    assert repr(store) == f"SqliteStore({str(tmp_path / 'runs.db')!r})"
    assert store.path == str(tmp_path / "runs.db")
    assert ExportedSqliteStore is SqliteStore
    assert isinstance(open_store(f"sqlite:///{tmp_path / 'url.db'}"), SqliteStore)


async def test_append_cancelled_while_queued_is_never_written(tmp_path: Path, samples: Any) -> None:
    """Invariant: an append whose caller is cancelled before the store starts it is dropped whole,
    never half-written and never written behind the caller's back."""
    db = tmp_path / "cancel.db"
    store = SqliteStore(db)
    try:
        await store.list_runs()
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")  # the store's next transaction waits for this lock
            first = asyncio.ensure_future(store.append("run-a", 0, samples.make_events("run-a", [samples.started()])))
            await asyncio.sleep(0.2)
            queued = asyncio.ensure_future(store.append("run-b", 0, samples.make_events("run-b", [samples.started()])))
            await asyncio.sleep(0.05)
            queued.cancel()
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await first
        with pytest.raises(asyncio.CancelledError):
            await queued

        assert await store.load("run-b") == []
        assert [s.run_id for s in await store.list_runs()] == ["run-a"]
    finally:
        await store.close()


async def test_lease_lives_in_the_file_not_the_process(tmp_path: Path) -> None:
    """Invariant: a lease granted through one store is held against every other store (process)
    on the same file, so one process drives a run at a time across processes."""
    db = tmp_path / "leases.db"
    mine, theirs = SqliteStore(db), SqliteStore(db)
    try:
        await mine.acquire_lease("run:r", "worker-1", 30)
        with pytest.raises(LeaseHeld) as raised:
            await theirs.acquire_lease("run:r", "worker-2", 30)
        assert raised.value.owner == "worker-1"
        await mine.release_lease("run:r", "worker-1")
        await theirs.acquire_lease("run:r", "worker-2", 30)
    finally:
        await mine.close()
        await theirs.close()


async def test_writes_that_change_nothing_cost_no_commit(tmp_path: Path) -> None:
    """Invariant: `commit_count` counts transactions that wrote: a refused lease, a release by a
    non-holder, an outdated snapshot or deleting an unknown run spends no COMMIT (no fsync)."""
    store = SqliteStore(tmp_path / "quiet.db")
    try:
        await store.acquire_lease("run:r", "a", 30)  # a lease costs no fsync, so no durable commit
        await store.save_snapshot(Snapshot("run:r", 5, "{}"))
        assert store.commit_count == 1
        with pytest.raises(LeaseHeld):
            await store.acquire_lease("run:r", "b", 30)
        await store.release_lease("run:r", "b")
        await store.save_snapshot(Snapshot("run:r", 4, "{}"))
        await store.delete_run("unknown")
        assert store.commit_count == 1
    finally:
        await store.close()


async def test_a_run_appending_alone_still_waits_for_another_process_off_the_event_loop(
    tmp_path: Path, samples: Any
) -> None:
    """Invariant: a write lock held by another process is waited for by the worker, even for a
    run appending alone, while the event loop keeps running."""
    store = SqliteStore(tmp_path / "held.db")
    other = sqlite3.connect(tmp_path / "held.db", isolation_level=None)
    try:
        events = samples.make_events("r", [samples.started(), samples.attempt(1), samples.attempt(2)])
        await store.append("r", 0, events[:1])
        await store.append("r", 1, events[1:2])  # the same run again, the worker idle
        other.execute("BEGIN IMMEDIATE")
        appending = asyncio.ensure_future(store.append("r", 2, events[2:]))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert not appending.done(), "the append must wait for the other process's lock"
        other.execute("COMMIT")
        await appending
        assert ticks == 20
        assert await store.load("r") == events
    finally:
        other.close()
        await store.close()


async def test_a_lone_runs_stale_append_conflicts_and_writes_nothing(tmp_path: Path, samples: Any) -> None:
    store = SqliteStore(tmp_path / "stale.db")
    try:
        events = samples.make_events("r", [samples.started(), samples.attempt(1)])
        await store.append("r", 0, events[:1])
        await store.append("r", 1, events[1:])
        commits = store.commit_count
        with pytest.raises(ConcurrencyConflict):
            await store.append("r", 1, samples.make_events("r", [samples.attempt(9)], start=1))
        assert store.commit_count == commits
        assert await store.load("r") == events
        more = samples.make_events("r", [samples.attempt(2)], start=2)
        await store.append("r", 2, more)  # the connection is left clean for the next write
        assert await store.load("r") == [*events, *more]
    finally:
        await store.close()


async def test_batches_short_and_long_are_compared_and_appended_alike(tmp_path: Path, samples: Any) -> None:
    """Invariant: a batch lands only at the run's next seq, whatever its length: one short
    enough for a single guarded INSERT and one longer (checked, then inserted, apart) both
    append in order, and both refuse a stale seq and a gap, writing nothing."""
    store = SqliteStore(tmp_path / "lengths.db")
    try:
        started = samples.make_events("r", [samples.started()])
        short = samples.make_events("r", [samples.attempt(i) for i in range(1, 4)], start=1)
        long = samples.make_events("r", [samples.attempt(i) for i in range(4, 204)], start=4)
        await store.append("r", 0, started)
        await store.append("r", 1, short)
        await store.append("r", 4, long)
        journal = [*started, *short, *long]
        assert await store.load("r") == journal
        for stale in (1, 150, 204 + 1, 300):
            for payloads in ([samples.attempt(0)], [samples.attempt(i) for i in range(120)]):
                with pytest.raises(ConcurrencyConflict) as raised:
                    await store.append("r", stale, samples.make_events("r", payloads, start=stale))
                assert raised.value.actual_seq == 204
        assert await store.load("r") == journal
    finally:
        await store.close()


async def test_checkpoints_copy_the_wal_into_the_file_while_the_loop_writes_on(
    tmp_path: Path, samples: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: every `_CHECKPOINT_EVERY` commits the worker checkpoints on a connection of its
    own, so the database file (without its WAL) holds the committed events, while appends go on
    committing one each."""
    monkeypatch.setattr(_worker, "_CHECKPOINT_EVERY", 5)
    db = tmp_path / "checkpointed.db"
    store = SqliteStore(db)
    events = samples.make_events("r", [samples.started(), *(samples.attempt(i) for i in range(1, 30))])
    try:
        for seq, event in enumerate(events):
            await store.append("r", seq, [event])
        assert store.commit_count == len(events)
        await store.list_runs()  # the worker's queue is served in order: earlier checkpoints are done
        alone = tmp_path / "alone.db"
        shutil.copyfile(db, alone)  # the database file alone, as the last checkpoint left it
        with contextlib.closing(sqlite3.connect(alone)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] >= len(events) - 5
        assert await store.load("r") == events
    finally:
        await store.close()
