"""The append fence holds across OS processes, and group commit never weakens it.

`append(run_id, expected_seq, …)` is what lets exactly one process execute a tool call: every
seq must be won by exactly one writer, whoever races for it, and batching many appends into one
SQLite transaction (group commit) must not let a conflicting append drag others down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from fence_writer import seq_winners

from eudaimon.core.errors import ConcurrencyConflict, CorruptEvent
from eudaimon.core.events import Event, ModelAttemptStarted, RunStarted
from eudaimon.stores.sqlite import SqliteStore

WRITER = Path(__file__).with_name("fence_writer.py")
PROCESSES = 6
SEQS = 150


def test_processes_racing_on_one_run_win_each_seq_exactly_once(tmp_path: Path) -> None:
    """Invariant: when several OS processes append to the same run at the same seqs of one SQLite
    file, every seq is won by exactly one of them, the others get ConcurrencyConflict with the real
    next seq, and the journal ends gap-free with no duplicate (the cross-process tool fence)."""
    db = tmp_path / "fence.db"
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), str(db), "run-fence", str(SEQS), f"w{i}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for i in range(PROCESSES)
    ]
    reports: list[dict[str, Any]] = []
    try:
        for proc in procs:  # every writer has opened the file (racing to create the schema)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "ready", proc.communicate(timeout=30)[1]
        for proc in procs:  # then they all start appending at once
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    # A refused append costs no commit (no fsync): one commit per seq won, nothing else.
    winner = seq_winners(reports, SEQS)
    # Every writer tried seq 0 and only one can have won it, so the race certainly happened.
    assert sum(r["conflicts"] for r in reports) >= PROCESSES - 1

    events = asyncio.run(_load_and_close(db, "run-fence"))
    assert [e.seq for e in events] == list(range(SEQS))
    assert isinstance(events[0].data, RunStarted)
    assert events[0].data.agent == winner[0]
    for event in events[1:]:
        assert isinstance(event.data, ModelAttemptStarted)
        assert event.data.request_id == f"{winner[event.seq]}:{event.seq}"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows, distinct = conn.execute("SELECT COUNT(*), COUNT(DISTINCT seq) FROM events").fetchone()
        (next_seq,) = conn.execute("SELECT MAX(seq) + 1 FROM events WHERE run_id = 'run-fence'").fetchone()
    assert rows == distinct == next_seq == SEQS


async def _load_and_close(db: Path, run_id: str) -> list[Event]:
    store = SqliteStore(db)
    try:
        return await store.load(run_id)
    finally:
        await store.close()


async def test_many_tasks_appending_at_once_all_commit_in_fewer_commits(tmp_path: Path, samples: Any) -> None:
    """Invariant: appends from many concurrent tasks (different runs) all commit, each run's journal
    is complete and in order, and appends that queue during a commit share the next one (group
    commit: fewer COMMITs than appends)."""
    tasks, appends_per_task = 100, 10
    store = SqliteStore(tmp_path / "group.db")

    async def drive(run_id: str) -> None:
        await store.append(run_id, 0, samples.make_events(run_id, [samples.started()]))
        for seq in range(1, appends_per_task):
            await store.append(run_id, seq, samples.make_events(run_id, [samples.attempt(seq)], start=seq))

    try:
        await asyncio.gather(*(drive(f"run-{i}") for i in range(tasks)))
        for i in range(tasks):
            assert [e.seq for e in await store.load(f"run-{i}")] == list(range(appends_per_task))
        assert len(await store.list_runs(limit=tasks * 2)) == tasks
        assert store.commit_count < tasks * appends_per_task
    finally:
        await store.close()


async def test_conflicting_append_in_a_group_fails_alone(tmp_path: Path, samples: Any) -> None:
    """Invariant: appends grouped into one transaction are judged one by one: a conflicting or
    malformed append fails alone, the others in the same COMMIT are written."""
    db = tmp_path / "group.db"
    store = SqliteStore(db)
    try:
        await store.list_runs()  # the schema exists before we take the lock
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            # Another process holds the write lock: the store's first transaction waits for it,
            # and every append sent meanwhile queues up for the next transaction.
            blocker.execute("BEGIN IMMEDIATE")
            first = asyncio.ensure_future(store.append("run-x", 0, samples.make_events("run-x", [samples.started()])))
            await asyncio.sleep(0.3)
            commits_before = store.commit_count
            queued = [
                store.append("run-a", 0, samples.make_events("run-a", [samples.started("a")])),
                store.append("run-b", 0, samples.make_events("run-b", [samples.started("b1")])),
                store.append("run-b", 0, samples.make_events("run-b", [samples.started("b2")])),
                store.append("run-c", 0, samples.make_events("run-c", [samples.started(), samples.attempt(0)])[::-1]),
                store.append("run-x", 5, samples.make_events("run-x", [samples.attempt(5)], start=5)),
                store.append("run-d", 0, samples.make_events("run-d", [samples.started("d"), samples.attempt(0)])),
            ]
            pending = [asyncio.ensure_future(append) for append in queued]
            await asyncio.sleep(0.3)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await first
        a, b1, b2, c, x, d = await asyncio.gather(*pending, return_exceptions=True)

        assert store.commit_count == commits_before + 2  # run-x alone, then the whole queue at once
        assert a is None
        assert d is None
        assert (b1, type(b2)) == (None, ConcurrencyConflict)
        assert isinstance(c, CorruptEvent)
        assert isinstance(x, ConcurrencyConflict)
        assert x.actual_seq == 1
        assert [e.data.agent for e in await store.load("run-b")] == ["b1"]  # type: ignore[union-attr]
        assert await store.load("run-c") == []
        assert [e.seq for e in await store.load("run-x")] == [0]
        assert [e.seq for e in await store.load("run-d")] == [0, 1]
        assert {s.run_id for s in await store.list_runs()} == {"run-x", "run-a", "run-b", "run-d"}
    finally:
        await store.close()
