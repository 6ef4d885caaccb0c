"""The SQLite journal's tables, and the upgrade of files made by older versions.

Pages written per commit are what an fsync'ed commit costs: events live in one B-tree keyed by
(run, seq) (WITHOUT ROWID), and an append touches besides them only the run's row of the run
index (`_index`, one UPDATE). A run's row in `runs` is written when it starts and once more
when it ends (`ended_at`, indexed); its last update, next seq and last type are read from its
last event. So `list_runs` reads the runs still going (few) and the newest ended ones through
the index, never every run; listings by status, search and the dashboard read `run_index`. Files made with the first layout
(a rowid events table) read the same; older files are upgraded when first opened.
"""

from __future__ import annotations

import sqlite3

from eudaimon.core.errors import JournalError
from eudaimon.core.events import TERMINAL_TYPES
from eudaimon.stores.sqlite import _content, _index, _records, _sql

VERSION = 5
"""`PRAGMA user_version` of a file with these tables: 4 lacked the due index (`run_index.due_at`,
`_index.add_due_column`) and `records` (`_records`), 3 lacked the run index (`_index`, filled
from the journal when such a file is first opened), 2 kept run summaries updated by every
append, 1 lacked the tables of texts and messages (`_content`)."""

TABLES = (
    """CREATE TABLE IF NOT EXISTS events (
        run_id TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, thread_id TEXT, created_at TEXT NOT NULL, ended_at TEXT)""",
    "CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id)",
    "CREATE INDEX IF NOT EXISTS runs_by_end ON runs (ended_at)",
    "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS snapshots (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL)",
    *_content.SCHEMA,
    *_index.SCHEMA,
    *_records.SCHEMA,
)


def ensure(conn: sqlite3.Connection) -> None:
    """Create the tables of a new file, or upgrade an older one, in a transaction of its own.

    Raises:
        JournalError: the file was made by a newer eudaimon.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > VERSION:
        raise JournalError(f"schema version {version} is newer than {VERSION}; upgrade eudaimon")
    if version < VERSION:
        conn.execute("BEGIN IMMEDIATE")  # several processes may create the schema at once
        _drop_run_summaries(conn)
        _index.add_due_column(conn)
        for statement in TABLES:
            conn.execute(statement)
        _index.backfill(conn, _sql.load_all)
        _index.create_search(conn)
        conn.execute(f"PRAGMA user_version = {VERSION}")
        conn.execute("COMMIT")


def _drop_run_summaries(conn: sqlite3.Connection) -> None:
    """Versions 1 and 2 kept each run's last update, next seq and last type in `runs`, written
    by every append, with an index on the update time: the columns and their indexes go, and an
    ended run keeps its last update as `ended_at`.

    `runs` is rebuilt rather than altered (DROP COLUMN needs SQLite 3.35), keeping each row's
    rowid: `list_runs` breaks ties by it."""
    columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    if "next_seq" not in columns:
        return  # a new file, or another process upgraded it first
    conn.execute(
        "CREATE TABLE runs_v3 (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, thread_id TEXT,"
        " created_at TEXT NOT NULL, ended_at TEXT)"
    )
    terminal = tuple(TERMINAL_TYPES)
    ended = ", ".join("?" * len(terminal))
    conn.execute(
        "INSERT INTO runs_v3 (rowid, run_id, agent, thread_id, created_at, ended_at)"
        f" SELECT rowid, run_id, agent, thread_id, created_at, CASE WHEN last_type IN ({ended}) THEN updated_at END"
        " FROM runs",
        terminal,
    )
    conn.execute("DROP TABLE runs")  # its indexes with it; `TABLES` makes the thread index again
    conn.execute("ALTER TABLE runs_v3 RENAME TO runs")
