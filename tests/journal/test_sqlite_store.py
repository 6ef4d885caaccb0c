"""What `SqliteStore` promises beyond the shared contract: a durable file, a lifecycle that does
not depend on one event loop, and commits a caller can count."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, JournalError
from eudaimon.stores import SqliteStore as ExportedSqliteStore
from eudaimon.stores import open_store
from eudaimon.stores.sqlite import SqliteStore


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


async def test_file_is_in_wal_mode_with_parent_directories_created(tmp_path: Path, samples: Any) -> None:
    """Invariant: the parent directories of the path are created, and the file uses WAL (readers
    never block the writer; other processes can read while a run appends)."""
    db = tmp_path / "a" / "b" / "runs.db"
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
