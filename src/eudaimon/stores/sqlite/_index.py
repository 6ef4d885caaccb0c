"""The run index in SQLite (`eudaimon.core.run_index`): one row per run, written by every append
in the append's own transaction, read by listings, search, the recovery sweep and the dashboard.

- An append's row is computed before the transaction from the row the store wrote last for the
  run (`SqliteStore` keeps it), and written with `UPDATE … WHERE next_seq = expected`: one
  statement. A store that did not write the run's last append (another process, a restart)
  reads the row back in the transaction, or, failing that, folds the run's events into it.
- Columns are what the queries filter, order and add up; `body` is the whole row as JSON.
  The listing's order (updated_at, run_id) is an index, and so is the status filter's, so a page
  of runs waiting for approval is a range scan; the other indexes hold columns no append
  changes, so an append moves the run in two indexes only (pages written per commit).
- `search` is the row's lower-cased search text (`RunRow.search_text`); its two parts are also
  kept in FTS5 tables with the trigram tokenizer, rowid = the run's rowid in `run_index`:
  `run_search` (ids, input, outcome: written when the run starts and ends) and `run_search_ids`
  (tool names and call ids: kept apart so that a step calling a tool does not re-index the
  input). A `q` of three characters or more is a phrase match in either, which for trigrams is
  exactly "a substring of"; a shorter one (no trigram to look up), or a SQLite built without
  FTS5, scans `search` (`instr`).
- A running run's ids are not written to `run_search_ids`: every step that calls a tool would
  rewrite its document (the largest part of the index's cost to an append). They are written
  when the run stops running (it waits, or ends); until then `q` reads a running run's ids off
  its `search` column, running runs being few and found by the status index. A document left
  from an earlier pause is never read while its run runs again.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from eudaimon.core.errors import EudaimonError
from eudaimon.core.events import Event
from eudaimon.core.run_index import RunRow, sortable
from eudaimon.stores.index import DayRow, RunQuery, day_row, nearest_rank, parsed_row

logger = logging.getLogger("eudaimon.stores")

RUNNING = "running"
"""The status whose ids `run_search_ids` does not hold (module docstring)."""

DUE_SCHEMA = ("CREATE INDEX IF NOT EXISTS run_index_by_due ON run_index (due_at) WHERE due_at IS NOT NULL",)
"""Schema 5: the due index. The sweepers that fire approval deadlines and wake waiting calls read
the runs due by now off it (a range scan of the few timed rows), not every waiting run."""


def add_due_column(conn: sqlite3.Connection) -> None:
    """Schema 4 → 5: `run_index.due_at` (`RunRow.due_at`). Rows of older files stay NULL: their
    journals hold no deadline and no wait."""
    columns = [row[1] for row in conn.execute("PRAGMA table_info(run_index)")]
    if columns and "due_at" not in columns:
        conn.execute("ALTER TABLE run_index ADD COLUMN due_at TEXT")


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS run_index (
        run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, thread_id TEXT, status TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, ended_at TEXT, next_seq INTEGER NOT NULL,
        duration_ms INTEGER, cost_usd REAL NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
        search TEXT NOT NULL, body TEXT NOT NULL, due_at TEXT)""",
    # Every append moves the run in the indexes holding updated_at (the listing's order, and the
    # status filter's): only those two do, so an append writes few index pages. A thread's runs
    # are few and an agent's page is read off `run_index_by_update` or sorted: neither needs it.
    "CREATE INDEX IF NOT EXISTS run_index_by_update ON run_index (updated_at, run_id)",
    "CREATE INDEX IF NOT EXISTS run_index_by_status ON run_index (status, updated_at, run_id)",
    "CREATE INDEX IF NOT EXISTS run_index_by_agent ON run_index (agent)",
    "CREATE INDEX IF NOT EXISTS run_index_by_thread ON run_index (thread_id)",
    "CREATE INDEX IF NOT EXISTS run_index_by_creation ON run_index (created_at)",
    *DUE_SCHEMA,
)

_COLUMNS = (
    "agent, thread_id, status, created_at, updated_at, ended_at, next_seq, duration_ms, cost_usd,"
    " input_tokens, output_tokens, search, body, due_at"
)
_SET_ALL = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS.split(", "))
_UPSERT = (
    f"INSERT INTO run_index (run_id, {_COLUMNS}) VALUES ({', '.join('?' * 15)})"
    f" ON CONFLICT (run_id) DO UPDATE SET {_SET_ALL}"
)
"""An upsert that keeps the run's rowid (which `run_search` rows are keyed by)."""
SEARCH_SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS run_search USING fts5(text, tokenize='trigram case_sensitive 1')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS run_search_ids USING fts5(ids, tokenize='trigram case_sensitive 1')",
)
"""The search text is lower-cased already: case-sensitive trigrams match exactly what `instr` would."""
_RESEARCH_TEXT = "INSERT OR REPLACE INTO run_search (rowid, text) SELECT rowid, ? FROM run_index WHERE run_id = ?"
_RESEARCH_IDS = "INSERT OR REPLACE INTO run_search_ids (rowid, ids) SELECT rowid, ? FROM run_index WHERE run_id = ?"
_ADVANCE = (
    "UPDATE run_index SET status = ?, updated_at = ?, ended_at = ?, next_seq = ?, duration_ms = ?, cost_usd = ?,"
    " input_tokens = ?, output_tokens = ?, body = ?, due_at = ?, search = coalesce(?, search)"
    " WHERE run_id = ? AND next_seq = ?"
)
"""The row's advance; its search text is left as it is (NULL) unless the batch changed it."""


def _values(row: RunRow) -> tuple[Any, ...]:
    ended = None if row.ended_at is None else sortable(row.ended_at)
    return (
        row.agent,
        row.thread_id,
        row.status,
        sortable(row.created_at),
        sortable(row.updated_at),
        ended,
        row.event_count,
        row.duration_ms,
        row.cost_usd,
        row.input_tokens,
        row.output_tokens,
        row.search_text,
        row.to_json(),
        _due(row),
    )


def _due(row: RunRow) -> str | None:
    due = row.due_at
    return None if due is None else sortable(due)


def write(
    conn: sqlite3.Connection,
    run_id: str,
    expected: int,
    events: Sequence[Event],
    row: RunRow | None,
    load: Callable[[sqlite3.Connection, str], list[Event]],
    *,
    search_changed: tuple[bool, bool] = (True, True),
) -> RunRow:
    """Write the run's row after `events` (appended at `expected` in this transaction); `row`
    is that row if the caller could compute it, and `search_changed` whether its search text's
    two parts differ from the row before. Returns the row written."""
    if expected == 0:
        row = row if row is not None else RunRow(run_id).advance(events)
        conn.execute(_UPSERT, (run_id, *_values(row)))
        _research(conn, row)
        return row
    if row is not None:
        ended = None if row.ended_at is None else sortable(row.ended_at)
        search = row.search_text if any(search_changed) else None
        values: tuple[Any, ...] = (row.status, sortable(row.updated_at), ended, row.event_count, row.duration_ms)
        values += (
            row.cost_usd,
            row.input_tokens,
            row.output_tokens,
            row.to_json(),
            _due(row),
            search,
            run_id,
            expected,
        )
        updated = conn.execute(_ADVANCE, values)
        if updated.rowcount == 1:
            _research(conn, row, *search_changed)
            return row
    kept = conn.execute("SELECT body FROM run_index WHERE run_id = ?", (run_id,)).fetchone()
    before = parsed_row(kept[0]) if kept is not None else None
    if before is not None and before.event_count == expected:
        row = before.advance(events)
    else:  # no row (an upgrade that could not read the run), or one out of step: rebuilt
        row = RunRow.of(load(conn, run_id)) or RunRow(run_id).advance(events)
    conn.execute(_UPSERT, (run_id, *_values(row)))
    _research(conn, row)
    return row


_has_search: dict[int, tuple[sqlite3.Connection, bool]] = {}
"""Per connection: whether the file has `run_search` (a SQLite built with FTS5), asked once. The
entry holds its connection, so that no later connection can take its id (one per worker)."""


def has_search(conn: sqlite3.Connection) -> bool:
    known = _has_search.get(id(conn))
    if known is None or known[0] is not conn:
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_search'"
        known = _has_search[id(conn)] = (conn, conn.execute(sql).fetchone() is not None)
    return known[1]


def create_search(conn: sqlite3.Connection) -> None:
    """Create the search tables and fill them from `run_index`; a SQLite without FTS5 goes without."""
    try:
        for statement in SEARCH_SCHEMA:
            conn.execute(statement)
    except sqlite3.OperationalError:  # no fts5 module: `q` scans `search`
        return
    _has_search.pop(id(conn), None)
    for (body,) in conn.execute("SELECT body FROM run_index").fetchall():
        row = parsed_row(body)
        if row is not None:
            _research(conn, row)


def _research(conn: sqlite3.Connection, row: RunRow, text: bool = True, ids: bool = True) -> None:
    """Rewrite the row's search documents that changed; a running row's ids wait (module docstring)."""
    if has_search(conn):
        if text:
            conn.execute(_RESEARCH_TEXT, (row.text_part, row.run_id))
        if ids and row.status != RUNNING:
            conn.execute(_RESEARCH_IDS, (row.ids_part, row.run_id))


def forget(conn: sqlite3.Connection, run_id: str) -> None:
    """Drop the run's row (retention)."""
    if has_search(conn):
        for table in ("run_search", "run_search_ids"):
            sql = f"DELETE FROM {table} WHERE rowid = (SELECT rowid FROM run_index WHERE run_id = ?)"
            conn.execute(sql, (run_id,))
    conn.execute("DELETE FROM run_index WHERE run_id = ?", (run_id,))


def backfill(conn: sqlite3.Connection, load: Callable[[sqlite3.Connection, str], list[Event]]) -> int:
    """Index every run the index lacks, folding its journal (the upgrade of an older file, once).
    A run whose journal cannot be read is indexed from its `runs` row alone, so it stays listed."""
    missing = conn.execute(
        "SELECT run_id, agent, thread_id, created_at FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_index)"
    ).fetchall()
    for run_id, agent, thread_id, created in missing:
        try:
            row = RunRow.of(load(conn, run_id))
        except EudaimonError as exc:
            logger.warning("run %s cannot be read to index it (%s); it is listed from its summary alone", run_id, exc)
            at = datetime.fromisoformat(created)
            row = RunRow(run_id, agent=agent, thread_id=thread_id, created_at=at, updated_at=at)
        if row is not None:
            conn.execute(_UPSERT, (run_id, *_values(row)))
    return len(missing)


def missing(conn: sqlite3.Connection) -> bool:
    """Whether the file has no index: an older file opened read-only, which cannot be upgraded."""
    sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_index'"
    return conn.execute(sql).fetchone() is None


def folded(conn: sqlite3.Connection, load: Callable[[sqlite3.Connection, str], list[Event]]) -> list[RunRow]:
    """Every run's row folded from its journal: the reads of a file without an index."""
    rows = []
    for (run_id,) in conn.execute("SELECT run_id FROM runs").fetchall():
        row = RunRow.of(load(conn, run_id))
        if row is not None:
            rows.append(row)
    return rows


def query(conn: sqlite3.Connection, q: RunQuery) -> list[RunRow]:
    where, args = _where(q, fts=len(q.needle) >= 3 and has_search(conn))
    sql = f"SELECT body FROM run_index{where} ORDER BY updated_at DESC, run_id DESC LIMIT ?"
    return [RunRow.from_json(body) for (body,) in conn.execute(sql, (*args, q.limit))]


def _replay_clauses(q: RunQuery, clauses: list[str], args: list[Any]) -> None:
    """Replays and versions, read from the row's body: no column of their own (not indexed)."""
    if q.hides_replays:
        clauses.append("json_extract(body, '$.replay_of') IS NULL")
    if q.replay_of is not None:
        clauses.append("json_extract(body, '$.replay_of') = ?")
        args.append(q.replay_of)
    if q.version is not None:
        clauses.append("coalesce(json_extract(body, '$.version'), '') = ?")
        args.append(q.version)


def _where(q: RunQuery, *, fts: bool) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    for column, value in (("status", q.status), ("agent", q.agent), ("thread_id", q.thread_id)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if q.statuses:
        clauses.append(f"status IN ({', '.join('?' * len(q.statuses))})")
        args.extend(q.statuses)
    _replay_clauses(q, clauses, args)
    if q.q and fts:
        clauses.append(
            "(rowid IN (SELECT rowid FROM run_search WHERE run_search MATCH ?)"
            f" OR (status != '{RUNNING}' AND rowid IN (SELECT rowid FROM run_search_ids WHERE run_search_ids MATCH ?))"
            f" OR (status = '{RUNNING}' AND instr(search, ?) > 0))"
        )
        phrase = '"' + q.needle.replace('"', '""') + '"'
        args.extend((phrase, phrase, q.needle))
    elif q.q:
        clauses.append("instr(search, ?) > 0")
        args.append(q.needle)
    if q.since is not None:
        clauses.append("created_at >= ?")
        args.append(sortable(q.since))
    if q.until is not None:
        clauses.append("created_at < ?")
        args.append(sortable(q.until))
    if q.due_by is not None:
        clauses.append("due_at <= ?")
        args.append(sortable(q.due_by))
    if q.cursor is not None:
        clauses.append("(updated_at, run_id) < (?, ?)")
        args.extend((q.cursor.updated_at, q.cursor.run_id))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


_DAYS = """WITH w AS (
    SELECT agent, substr(created_at, 1, 10) AS day, status,
        CASE WHEN json_extract(body, '$.cost_known') THEN cost_usd END AS cost_usd, input_tokens, output_tokens, duration_ms
    FROM run_index WHERE created_at >= ?{agent} AND json_extract(body, '$.replay_of') IS NULL)
SELECT agent, day, status, COUNT(*), SUM(cost_usd), SUM(input_tokens), SUM(output_tokens) FROM w
GROUP BY agent, day, status"""

_DURATIONS = """SELECT agent, substr(created_at, 1, 10), duration_ms
FROM run_index WHERE created_at >= ?{agent} AND duration_ms IS NOT NULL
    AND json_extract(body, '$.replay_of') IS NULL"""
"""The ended runs' durations; their nearest-rank percentiles are taken in Python
(`stores.index.nearest_rank`): SQLite has no percentile function, and ranking
with window functions cost several times the scan."""


def dashboard(conn: sqlite3.Connection, since: datetime, agent: str | None) -> list[DayRow]:
    args: list[Any] = [sortable(since)]
    narrowed = ""
    if agent is not None:
        narrowed = " AND agent = ?"
        args.append(agent)
    groups = conn.execute(_DAYS.format(agent=narrowed), args).fetchall()
    durations: dict[tuple[str, str], list[int]] = {}
    for name, day, duration in conn.execute(_DURATIONS.format(agent=narrowed), args):
        durations.setdefault((name, day), []).append(int(duration))
    percentiles: dict[tuple[str, str], tuple[int | None, int | None]] = {}
    for key, values in durations.items():
        values.sort()
        percentiles[key] = (nearest_rank(values, 50), nearest_rank(values, 95))
    return day_rows_of(groups, percentiles)


def day_rows_of(
    groups: Sequence[tuple[Any, ...]], percentiles: dict[tuple[str, str], tuple[int | None, int | None]]
) -> list[DayRow]:
    """Day rows from (agent, day, status, runs, cost, input, output) groups and the percentiles;
    a group's cost is None (SQL NULL) when none of its runs had a price."""
    days: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for group in groups:
        days.setdefault((str(group[0]), str(group[1])), []).append(group)
    return [
        day_row(
            agent,
            day,
            [(str(g[2]), int(g[3]), None if g[4] is None else float(g[4]), int(g[5]), int(g[6])) for g in found],
            *percentiles.get((agent, day), (None, None)),
        )
        for (agent, day), found in sorted(days.items(), key=lambda item: (item[0][1], item[0][0]))
    ]
