"""The SQL of the SQLite journal: the compare-and-append, the reads, retention.

Every function here takes a connection and runs on the commit worker's thread (`_worker`): a
write inside the transaction the worker began (`BEGIN IMMEDIATE`, so holding SQLite's write lock
across processes), which it may share with others' writes (`_worker._run_writes`).

- The expected-seq check reads the run's last seq (one seek in the `events` key) after
  `BEGIN IMMEDIATE`, so two processes cannot both win a seq; the PRIMARY KEY (run_id, seq) of
  `events` is the hard fence behind that check. An append writes besides its events only the
  run's row of the run index (`_index`); `list_runs`' summary is read from the last event.
- The check and the insert are one statement (`_guarded_insert`: rows that land only if the
  run's last seq is the one before them). `sqlite3` lets go of the GIL around every step of a
  statement, and with runs busy on the event loop each step waits to get it back: one append
  was about ten steps (the seq read, a step per row, the savepoint), and with 1,000 runs in
  flight the worker spent most of its time waiting for the GIL, and the runs for the worker.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache

from eudaimon.core.errors import ConcurrencyConflict, CorruptEvent
from eudaimon.core.events import TERMINAL_TYPES, Event
from eudaimon.core.run_index import RunRow
from eudaimon.stores.base import RunSummary, Snapshot, check_batch, summary_fields
from eudaimon.stores.packing import PackedBatch
from eudaimon.stores.sqlite import _content, _index

SAVE_SNAPSHOT = (
    "INSERT INTO snapshots (key, version, data) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE"
    " SET version = excluded.version, data = excluded.data WHERE excluded.version >= snapshots.version"
)


def append(
    conn: sqlite3.Connection,
    run_id: str,
    expected: int,
    events: Sequence[Event],
    packed: PackedBatch,
    snapshot: Snapshot | None,
    row: RunRow | None = None,
    *,
    search_changed: tuple[bool, bool] = (True, True),
) -> RunRow:
    """One compare-and-append and the run's row of the index (`row`, if the caller computed
    it); raising undoes it (the worker rolls it back). Returns the row written."""
    guarded = len(events) <= _GUARDED_ROWS
    if not guarded:
        _check_next(conn, run_id, expected)
    try:
        check_batch(run_id, expected, events)
    except CorruptEvent:
        _check_next(conn, run_id, expected)  # a conflict is what to report first
        raise
    if expected == 0:
        # OR REPLACE: a summary left without events (a hand edit) must not block the run's id.
        agent, thread_id = summary_fields(events)
        conn.execute(
            "INSERT OR REPLACE INTO runs (run_id, agent, thread_id, created_at) VALUES (?, ?, ?, ?)",
            (run_id, agent, thread_id, sortable(events[0].at)),
        )
    payloads = _content.store(conn, run_id, packed)
    rows = [(e.run_id, e.seq, e.at.isoformat(), e.type, p) for e, p in zip(events, payloads, strict=True)]
    if guarded:
        inserted = conn.execute(_guarded_insert(len(rows)), (*(v for row in rows for v in row), run_id, expected - 1))
        if inserted.rowcount != len(rows):
            _check_next(conn, run_id, expected)  # raises: the guard wrote nothing
            raise CorruptEvent(run_id, expected, f"the guarded insert wrote {inserted.rowcount} of {len(rows)} events")
    else:
        conn.executemany("INSERT INTO events (run_id, seq, at, type, payload) VALUES (?, ?, ?, ?, ?)", rows)
    final = events[-1]
    if final.type in TERMINAL_TYPES:  # once per run: what lets `list_runs` read the newest ended runs alone
        conn.execute("UPDATE runs SET ended_at = ? WHERE run_id = ?", (sortable(final.at), run_id))
    written = _index.write(conn, run_id, expected, events, row, load_all, search_changed=search_changed)
    if snapshot is not None:
        conn.execute(SAVE_SNAPSHOT, (snapshot.key, snapshot.version, snapshot.data))
    return written


def load_all(conn: sqlite3.Connection, run_id: str) -> list[Event]:
    return load(conn, run_id, -1)


_GUARDED_ROWS = 64
"""Most events one guarded INSERT writes (5 parameters each, under SQLite's oldest limit of 999);
a longer batch is checked, then inserted, in statements of their own."""


@cache
def _guarded_insert(rows: int) -> str:
    """An INSERT of `rows` events that writes none unless the run's last seq is the parameter
    after them (-1 for a new run)."""
    values = ", ".join(["(?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO events (run_id, seq, at, type, payload) SELECT * FROM (VALUES {values})"
        " WHERE (SELECT COALESCE(MAX(seq), -1) FROM events WHERE run_id = ?) = ?"
    )


def _check_next(conn: sqlite3.Connection, run_id: str, expected: int) -> None:
    """Raise `ConcurrencyConflict` unless the run's next seq is `expected`."""
    last = conn.execute("SELECT MAX(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    actual = 0 if last is None else int(last) + 1
    if expected != actual:
        raise ConcurrencyConflict(run_id, expected, actual)


def load(conn: sqlite3.Connection, run_id: str, after_seq: int) -> list[Event]:
    rows = conn.execute(
        "SELECT seq, at, type, payload FROM events WHERE run_id = ? AND seq > ? ORDER BY seq", (run_id, after_seq)
    ).fetchall()
    try:
        return _content.load(conn, run_id, rows, after_seq)
    except (TypeError, ValueError) as exc:  # a NULL or a non-text column written by hand
        raise CorruptEvent(run_id, after_seq + 1, str(exc)) from exc


_SELECT_SUMMARIES = (
    "SELECT r.rowid, r.run_id, r.agent, r.thread_id, r.created_at, e.at, e.seq, e.type FROM runs AS r"
    " JOIN events AS e ON e.run_id = r.run_id AND e.seq = (SELECT MAX(seq) FROM events WHERE run_id = r.run_id)"
)
"""Each run's summary: its row in `runs` and its last event (one seek in the events key)."""


def list_runs(conn: sqlite3.Connection, limit: int, thread_id: str | None) -> list[RunSummary]:
    """Most recently updated first; among runs updated at once, the one made first first.

    No index orders runs by their last update (keeping one would cost every append a page), but
    an ended run's last update is its end (`runs_by_end`): only the runs still going (few: live,
    paused or abandoned) and the newest `limit` ended runs are read. A thread's runs are read
    whole (`runs_by_thread`)."""
    if thread_id is not None:
        rows = conn.execute(f"{_SELECT_SUMMARIES} WHERE r.thread_id = ?", (thread_id,)).fetchall()
    else:
        rows = conn.execute(f"{_SELECT_SUMMARIES} WHERE r.ended_at IS NULL").fetchall()
        rows += conn.execute(
            f"{_SELECT_SUMMARIES} WHERE r.ended_at IS NOT NULL ORDER BY r.ended_at DESC, r.rowid LIMIT ?", (limit,)
        ).fetchall()
        rows.sort(key=lambda row: int(row[0]))
    summaries = [
        RunSummary(run, agent, thread, datetime.fromisoformat(created), datetime.fromisoformat(at), seq + 1, tag)
        for _, run, agent, thread, created, at, seq, tag in rows
    ]
    summaries.sort(key=lambda summary: sortable(summary.updated_at), reverse=True)  # stable: ties keep rowid order
    return summaries[:limit]


def delete_run(conn: sqlite3.Connection, run_id: str) -> None:
    _content.release(conn, run_id)
    conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    _index.forget(conn, run_id)
    conn.execute("DELETE FROM snapshots WHERE key = ?", (f"run:{run_id}",))


def sortable(at: datetime) -> str:
    """A time whose text sorts in time order: aware times in UTC, always with microseconds."""
    return (at.astimezone(UTC) if at.tzinfo is not None else at).isoformat(timespec="microseconds")
