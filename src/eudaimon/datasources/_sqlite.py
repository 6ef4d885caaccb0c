"""A SQLite datasource: sqlite3, one `BEGIN IMMEDIATE` transaction per call.

IMMEDIATE takes the write lock when the transaction opens, so a call that reads then writes is
never refused halfway (a deferred transaction that upgrades may be, under WAL). The connections
are in sqlite3's legacy transaction mode: should a sync tool's thread outlive its call (a
timeout) and write after the rollback, its write opens a transaction nobody commits, on a
connection that is closed, never reused. Blocking work runs in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import sqlite3

from eudaimon.datasources._record import COMPLETIONS_TABLE, Backend, ErrorOf, StoredCompletion

_CREATE = f"""
CREATE TABLE IF NOT EXISTS {COMPLETIONS_TABLE} (
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    output TEXT NOT NULL,
    is_error INTEGER NOT NULL,
    committed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, call_id)
)"""
_INSERT = f"INSERT INTO {COMPLETIONS_TABLE} (run_id, call_id, idempotency_key, output, is_error) VALUES (?, ?, ?, ?, ?)"
_SELECT = f"SELECT output, is_error FROM {COMPLETIONS_TABLE} WHERE run_id = ? AND call_id = ?"
BUSY_TIMEOUT_S = 30.0
"""How long a transaction waits for another's write lock (SQLite has one writer at a time)."""


class SqliteBackend(Backend):
    def __init__(self, path: str, error: ErrorOf) -> None:
        self.path = path
        self.error = error
        self._idle: list[sqlite3.Connection] = []
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level="IMMEDIATE", check_same_thread=False
            )
            if not self._ready:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_CREATE)
                conn.commit()
                self._ready = True
        except sqlite3.Error as exc:
            raise self.error("connecting", exc) from None
        return conn

    def _begin(self) -> sqlite3.Connection:
        conn = self._idle.pop() if self._idle else self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            conn.close()
            raise self.error("beginning a transaction", exc) from None
        return conn

    async def begin(self, is_async: bool) -> sqlite3.Connection:
        return await asyncio.to_thread(self._begin)

    def _commit(self, conn: sqlite3.Connection, row: tuple[str, str, str, str, bool]) -> bool:
        try:
            conn.execute(_INSERT, row)
        except sqlite3.IntegrityError:
            conn.rollback()
            self._idle.append(conn)
            return False
        conn.commit()
        self._idle.append(conn)
        return True

    async def commit(
        self, conn: sqlite3.Connection, run_id: str, call_id: str, key: str, output: str, is_error: bool
    ) -> bool:
        return await asyncio.to_thread(self._commit, conn, (run_id, call_id, key, output, is_error))

    def _rollback(self, conn: sqlite3.Connection, reuse: bool) -> None:
        try:
            conn.rollback()
        except sqlite3.Error:
            reuse = False
        if reuse:
            self._idle.append(conn)
        else:
            conn.close()

    async def rollback(self, conn: sqlite3.Connection, reuse: bool) -> None:
        await asyncio.to_thread(self._rollback, conn, reuse)

    def _lookup(self, run_id: str, call_id: str) -> StoredCompletion | None:
        conn = self._idle.pop() if self._idle else self._connect()
        try:
            row = conn.execute(_SELECT, (run_id, call_id)).fetchone()
        except sqlite3.Error as exc:
            conn.close()
            raise self.error("looking up a completion", exc) from None
        self._idle.append(conn)
        return None if row is None else StoredCompletion(str(row[0]), bool(row[1]))

    async def lookup(self, run_id: str, call_id: str) -> StoredCompletion | None:
        return await asyncio.to_thread(self._lookup, run_id, call_id)

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
