"""A SQLite journal written by an older eudaimon opens in place: its runs keep their summaries,
their order and their fence, and the file is upgraded to the current schema once."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from eudaimon.core.errors import ConcurrencyConflict
from eudaimon.core.events import Event
from eudaimon.stores import RunSummary
from eudaimon.stores.sqlite import SqliteStore

_VERSION_2 = """
    CREATE TABLE events (
        run_id TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, thread_id TEXT, created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL, next_seq INTEGER NOT NULL, last_type TEXT NOT NULL);
    CREATE INDEX runs_by_updated_at ON runs (updated_at);
    CREATE INDEX runs_by_thread ON runs (thread_id);
    CREATE TABLE leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
    CREATE TABLE snapshots (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE TABLE texts (
        id INTEGER PRIMARY KEY, digest BLOB, parts INTEGER, refs INTEGER NOT NULL DEFAULT 0, body TEXT NOT NULL);
    CREATE UNIQUE INDEX texts_by_digest ON texts (digest) WHERE digest IS NOT NULL;
    CREATE TABLE messages (key INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, body TEXT NOT NULL, text BLOB);
    CREATE TABLE message_refs (
        run_id TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, PRIMARY KEY (run_id, lo)) WITHOUT ROWID;
    CREATE INDEX message_refs_by_lo ON message_refs (lo, hi);
    PRAGMA user_version = 2;
"""
"""The schema as version 2 made it: every append also rewrote the run's row in `runs`."""


def _version_2_file(path: Path, samples: Any) -> None:
    """Runs "b" (made first, 1 event), "a" (2 events, thread t), "d" (ended) and "c" (made last,
    updated at the same moment as "b"), with their rows as version 2 kept them."""
    t0 = samples.T0
    runs = [
        ("b", None, [(t0, "run_started")]),
        ("a", "t", [(t0, "run_started"), (t0 + timedelta(minutes=5), "model_attempt_started")]),
        ("d", None, [(t0, "run_started"), (t0 + timedelta(minutes=2), "run_completed")]),
        ("c", None, [(t0, "run_started")]),
    ]
    conn = sqlite3.connect(path)
    try:
        conn.executescript(_VERSION_2)
        for run_id, thread, events in runs:
            started = '{"agent":"bot","input":"hi","messages":[]' + (f',"thread_id":"{thread}"' if thread else "") + "}"
            payloads = {
                "run_started": started,
                "model_attempt_started": '{"step":0,"request_id":"r0","request_digest":""}',
                "run_completed": '{"output":"ok"}',
            }
            for seq, (at, tag) in enumerate(events):
                row = (run_id, seq, at.isoformat(), tag, payloads[tag])
                conn.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?)", row)
            last_at, last_type = events[-1]
            summary = (run_id, "bot", thread, t0.isoformat(), last_at.isoformat(), len(events), last_type)
            conn.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)", summary)
        conn.commit()
    finally:
        conn.close()


async def test_a_version_2_file_keeps_its_summaries_order_and_fence(tmp_path: Path, samples: Any) -> None:
    """Invariant: upgrading a version 2 file changes no run's summary nor the order `list_runs`
    gives (ties: the run made first stays first), and each run still fences at its next seq."""
    path = tmp_path / "v2.db"
    _version_2_file(path, samples)
    t0 = samples.T0
    store = SqliteStore(path)
    try:
        summaries = await store.list_runs()
        assert summaries == [
            RunSummary("a", "bot", "t", t0, t0 + timedelta(minutes=5), 2, "model_attempt_started"),
            RunSummary("d", "bot", None, t0, t0 + timedelta(minutes=2), 2, "run_completed"),
            RunSummary("b", "bot", None, t0, t0, 1, "run_started"),
            RunSummary("c", "bot", None, t0, t0, 1, "run_started"),
        ]
        assert await store.list_runs(thread_id="t") == summaries[:1]
        with pytest.raises(ConcurrencyConflict) as raised:
            await store.append("a", 1, samples.make_events("a", [samples.attempt(1)], start=1))
        assert raised.value.actual_seq == 2
        await store.append("b", 1, [Event.of("b", 1, t0 + timedelta(minutes=9), samples.attempt(1))])
        assert [(s.run_id, s.event_count) for s in await store.list_runs()] == [("b", 2), ("a", 2), ("d", 2), ("c", 1)]
    finally:
        await store.close()

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (5,)
        indexed = dict(conn.execute("SELECT run_id, status FROM run_index").fetchall())
        assert indexed == {"a": "running", "b": "running", "c": "running", "d": "completed"}
        columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
        assert columns == ["run_id", "agent", "thread_id", "created_at", "ended_at"]
        ended = dict(conn.execute("SELECT run_id, ended_at FROM runs").fetchall())
        assert ended == {"a": None, "b": None, "c": None, "d": (t0 + timedelta(minutes=2)).isoformat()}
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'runs'")}
        assert "runs_by_updated_at" not in indexes
        assert {"runs_by_thread", "runs_by_end"} <= indexes
    finally:
        conn.close()


async def test_an_append_writes_only_the_events_it_adds(tmp_path: Path, samples: Any) -> None:
    """Invariant: after a run's first append, an append changes no row but its own events and
    the run's row of the run index (`runs` stays as written): each durable commit writes as few
    pages as it can."""
    store = SqliteStore(tmp_path / "lean.db")
    try:
        events = samples.make_events("r", [samples.started(), samples.attempt(0), samples.attempt(1)])
        await store.append("r", 0, events[:1])
        conn = sqlite3.connect(store.path)
        try:
            before = conn.execute("SELECT rowid, * FROM runs").fetchall()
            await store.append("r", 1, events[1:2])
            await store.append("r", 2, events[2:])
            assert conn.execute("SELECT rowid, * FROM runs").fetchall() == before
            assert conn.execute("SELECT run_id, next_seq FROM run_index").fetchall() == [("r", 3)]
        finally:
            conn.close()
        (summary,) = await store.list_runs()
        assert (summary.event_count, summary.updated_at, summary.last_event_type) == (3, events[2].at, events[2].type)
    finally:
        await store.close()
