"""The `records` table (`stores.records`): schedules and the webhook outbox, added in version 5."""

from __future__ import annotations

import sqlite3

from eudaimon.stores.records import Record

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS records (
        kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID""",
)
"""Version 4 → 5: one table, created empty; nothing to fill."""


def put(conn: sqlite3.Connection, kind: str, key: str, body: str, only_new: bool, expected: str | None) -> bool:
    if expected is not None:
        sql = "UPDATE records SET body = ? WHERE kind = ? AND key = ? AND body = ?"
        return conn.execute(sql, (body, kind, key, expected)).rowcount > 0
    verb = "INSERT OR IGNORE" if only_new else "INSERT OR REPLACE"
    cursor = conn.execute(f"{verb} INTO records (kind, key, body) VALUES (?, ?, ?)", (kind, key, body))
    return cursor.rowcount > 0


def load_all(conn: sqlite3.Connection, kind: str, limit: int) -> list[Record]:
    rows = conn.execute("SELECT key, body FROM records WHERE kind = ? ORDER BY key LIMIT ?", (kind, limit))
    return [Record(kind, key, body) for key, body in rows]


def load_one(conn: sqlite3.Connection, kind: str, key: str) -> Record | None:
    row = conn.execute("SELECT body FROM records WHERE kind = ? AND key = ?", (kind, key)).fetchone()
    return None if row is None else Record(kind, key, row[0])


def delete(conn: sqlite3.Connection, kind: str, key: str) -> bool:
    return conn.execute("DELETE FROM records WHERE kind = ? AND key = ?", (kind, key)).rowcount > 0
