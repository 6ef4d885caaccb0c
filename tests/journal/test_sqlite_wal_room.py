"""The room `SqliteStore` keeps ahead of its write-ahead log: synced zeros past the last frame,
so that a durable commit's sync overwrites blocks instead of lengthening the file. The room
must never be read as data, never overwrite a frame, and be made once between writers."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eudaimon.stores.sqlite import SqliteStore
from eudaimon.stores.sqlite._wal_room import STEPS


def _wal_size(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return wal.stat().st_size if wal.exists() else 0


async def test_a_durable_commit_leaves_the_wal_room_to_grow_into(tmp_path: Path, samples: Any) -> None:
    db = tmp_path / "room.db"
    made = SqliteStore(db)
    await made.list_runs()  # the schema's own frames (the run index's tables) checkpointed away on close
    await made.close()
    store = SqliteStore(db)
    try:
        events = samples.make_events("r", [samples.started(), samples.attempt(1), samples.attempt(2)])
        await store.append("r", 0, events[:1])
        assert _wal_size(db) == STEPS[0]
        for seq, event in enumerate(events[1:], start=1):
            await store.append("r", seq, [event])
        assert _wal_size(db) == STEPS[0], "commits within the room do not lengthen the file"
        assert await store.load("r") == events
    finally:
        await store.close()


async def test_frames_that_outgrow_the_room_get_more_up_to_the_last_step(tmp_path: Path, samples: Any) -> None:
    db = tmp_path / "outgrown.db"
    store = SqliteStore(db)
    sizes = []
    try:
        for n in range(120):  # each commit adds a run: new cells in several B-trees
            await store.append(f"run-{n:04}", 0, samples.make_events(f"run-{n:04}", [samples.started()]))
            sizes.append(_wal_size(db))
        steps = sorted({size for size in sizes if size in STEPS})
        assert steps == list(STEPS[: len(steps)]) and len(steps) >= 3, "room is made one step at a time"
        stray = [size for size in sizes if size not in STEPS and size < STEPS[-1]]
        assert len(stray) < len(steps), "only a commit that outgrew the room leaves the WAL between steps"
        assert len(await store.list_runs(limit=500)) == 120
    finally:
        await store.close()


async def test_the_room_is_never_read_as_data_after_a_crash(tmp_path: Path, samples: Any) -> None:
    """Invariant: the files as a crash leaves them (copied while the store is open, nothing
    checkpointed) read back exactly the committed events; the zeros after the last frame are
    not taken for frames."""
    db = tmp_path / "live.db"
    store = SqliteStore(db)
    events = samples.make_events("r", [samples.started(), *(samples.attempt(i) for i in range(1, 30))])
    try:
        await store.append("r", 0, events[:1])
        for seq in range(1, len(events)):
            await store.append("r", seq, events[seq : seq + 1])
        crashed = tmp_path / "crashed.db"
        for suffix in ("", "-wal"):  # no -shm: the reader must recover the index from the WAL
            shutil.copyfile(f"{db}{suffix}", f"{crashed}{suffix}")
    finally:
        await store.close()

    reopened = SqliteStore(crashed)
    try:
        assert await reopened.load("r") == events
        more = samples.make_events("r", [samples.attempt(99)], start=len(events))
        await reopened.append("r", len(events), more)
        assert await reopened.load("r") == [*events, *more]
    finally:
        await reopened.close()


async def test_writers_sharing_a_file_make_the_room_once(tmp_path: Path, samples: Any) -> None:
    """Invariant: room is made to absolute sizes, so two stores writing in turn (as two
    processes would) never add room on top of each other's: the WAL ends as one writer's."""

    async def write(db: Path, writers: list[SqliteStore]) -> int:
        try:
            for n in range(30):
                await writers[n % len(writers)].append(f"r{n}", 0, samples.make_events(f"r{n}", [samples.started()]))
            assert len(await writers[-1].list_runs(limit=50)) == 30
            return _wal_size(db)
        finally:
            for writer in writers:
                await writer.close()

    alone, shared = tmp_path / "alone.db", tmp_path / "shared.db"
    size_alone = await write(alone, [SqliteStore(alone)])
    size_shared = await write(shared, [SqliteStore(shared), SqliteStore(shared)])
    assert size_alone in STEPS
    assert size_shared == size_alone


async def test_room_is_made_again_after_the_wal_is_truncated(tmp_path: Path, samples: Any) -> None:
    db = tmp_path / "truncated.db"
    store = SqliteStore(db)
    try:
        await store.append("a", 0, samples.make_events("a", [samples.started()]))
        other = sqlite3.connect(db)
        try:
            other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            other.close()
        assert _wal_size(db) == 0
        await store.append("b", 0, samples.make_events("b", [samples.started()]))
        assert _wal_size(db) == STEPS[0]
        assert len(await store.list_runs()) == 2
    finally:
        await store.close()


async def test_commits_without_an_fsync_make_no_room(tmp_path: Path, samples: Any) -> None:
    """Only an fsynced commit pays for lengthening the file, so only those make room; leases
    commit without one."""
    normal_db, full_db = tmp_path / "normal.db", tmp_path / "full.db"
    normal, full = SqliteStore(normal_db, synchronous="normal"), SqliteStore(full_db)
    try:
        await normal.append("r", 0, samples.make_events("r", [samples.started()]))
        await full.acquire_lease("run:r", "me", 30)
        assert 0 < _wal_size(normal_db) < STEPS[0]
        assert 0 < _wal_size(full_db) < STEPS[0]
    finally:
        await normal.close()
        await full.close()


async def test_a_platform_without_fdatasync_commits_without_room(
    tmp_path: Path, samples: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Portability: where `os.fdatasync` or `os.pwrite` is missing (macOS, Windows) the store
    makes no room and every durable commit still succeeds, rather than failing for want of
    an optimisation."""
    monkeypatch.delattr(os, "fdatasync", raising=False)
    db = tmp_path / "portable.db"
    store = SqliteStore(db)
    try:
        events = samples.make_events("r", [samples.started(), samples.attempt(1), samples.attempt(2)])
        for seq, event in enumerate(events):
            await store.append("r", seq, [event])
        assert await store.load("r") == events
        assert _wal_size(db) not in STEPS, "no zeros were written ahead of the WAL"
    finally:
        await store.close()
