"""A PostgreSQL datasource: psycopg 3, a `Connection` for a sync tool, an `AsyncConnection` for
an async one, each in psycopg's default (non-autocommit) mode, so every statement is inside the
call's transaction until eudaimon commits it.

The completion record's primary key is the fence: a second process committing the same call
waits on the first's row lock, then fails on the key, and its transaction rolls back whole.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from eudaimon._extras import require
from eudaimon.datasources._record import COMPLETIONS_TABLE, Backend, ErrorOf, StoredCompletion

_CREATE = f"""
CREATE TABLE IF NOT EXISTS {COMPLETIONS_TABLE} (
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    output TEXT NOT NULL,
    is_error BOOLEAN NOT NULL,
    committed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, call_id)
)"""
_INSERT = (
    f"INSERT INTO {COMPLETIONS_TABLE} (run_id, call_id, idempotency_key, output, is_error) VALUES (%s, %s, %s, %s, %s)"
)
_SELECT = f"SELECT output, is_error FROM {COMPLETIONS_TABLE} WHERE run_id = %s AND call_id = %s"


class PostgresBackend(Backend):
    def __init__(self, url: str, error: ErrorOf) -> None:
        require("postgres", "a PostgreSQL Datasource", "psycopg")
        self.url = url
        self.error = error
        self._idle_sync: list[Any] = []
        self._idle_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._ready = False

    @property
    def _idle_async(self) -> list[Any]:
        """This event loop's idle async connections: an `AsyncConnection` serves only the loop
        that opened it (`prompt_sync` runs each prompt on a loop of its own). Those kept for a
        loop that has closed are closed here, synchronously (libpq's own close needs no loop)."""
        for loop in [loop for loop in self._idle_by_loop if loop.is_closed()]:
            for conn in self._idle_by_loop.pop(loop):
                conn.pgconn.finish()
        return self._idle_by_loop.setdefault(asyncio.get_running_loop(), [])

    async def _connect(self, is_async: bool) -> Any:
        import psycopg

        try:
            if is_async:
                conn: Any = await psycopg.AsyncConnection.connect(self.url)
            else:
                conn = await asyncio.to_thread(psycopg.Connection.connect, self.url)
            if not self._ready:
                await self._create(conn, is_async)
        except psycopg.Error as exc:
            raise self.error("connecting", exc) from None
        return conn

    async def _create(self, conn: Any, is_async: bool) -> None:
        import psycopg

        async def run(sql: str) -> None:
            if is_async:
                await conn.execute(sql)
                await conn.commit()
            else:
                await asyncio.to_thread(_execute_commit, conn, sql)

        try:
            await run(_CREATE)
        except psycopg.errors.UniqueViolation:  # two processes created it at once: it exists
            await (conn.rollback() if is_async else asyncio.to_thread(conn.rollback))
        self._ready = True

    async def begin(self, is_async: bool) -> Any:
        idle = self._idle_async if is_async else self._idle_sync
        # psycopg opens the transaction with the first statement
        return idle.pop() if idle else await self._connect(is_async)

    async def commit(self, conn: Any, run_id: str, call_id: str, key: str, output: str, is_error: bool) -> bool:
        import psycopg

        row = (run_id, call_id, key, output, is_error)
        is_async = isinstance(conn, psycopg.AsyncConnection)
        try:
            if is_async:
                async with conn.pipeline():  # the record and the commit in one round trip
                    await conn.execute(_INSERT, row)
                    await conn.commit()
            else:
                await asyncio.to_thread(_execute_commit, conn, _INSERT, row)
        except psycopg.errors.UniqueViolation:
            await self.rollback(conn, True)
            return False
        except psycopg.Error as exc:
            await self.rollback(conn, False)
            raise self.error("committing", exc) from None
        (self._idle_async if is_async else self._idle_sync).append(conn)
        return True

    async def rollback(self, conn: Any, reuse: bool) -> None:
        import psycopg

        is_async = isinstance(conn, psycopg.AsyncConnection)
        try:
            if is_async:
                await conn.rollback()
            else:
                await asyncio.to_thread(conn.rollback)
        except psycopg.Error:
            reuse = False
        if reuse and not conn.closed:
            (self._idle_async if is_async else self._idle_sync).append(conn)
        elif is_async:
            await conn.close()
        else:
            conn.close()

    def lost(self, conn: Any) -> bool:
        return bool(conn.broken or conn.closed)

    async def lookup(self, run_id: str, call_id: str) -> StoredCompletion | None:
        import psycopg

        conn = self._idle_async.pop() if self._idle_async else await self._connect(True)
        try:
            cursor = await conn.execute(_SELECT, (run_id, call_id))
            row = await cursor.fetchone()
            await conn.rollback()
        except psycopg.Error as exc:
            await conn.close()
            raise self.error("looking up a completion", exc) from None
        self._idle_async.append(conn)
        return None if row is None else StoredCompletion(str(row[0]), bool(row[1]))

    async def close(self) -> None:
        idle_async = list(self._idle_async)  # also closes those kept for loops that have closed
        self._idle_by_loop.pop(asyncio.get_running_loop(), None)
        idle_sync, self._idle_sync = self._idle_sync, []
        for conn in idle_async:
            await conn.close()
        for conn in idle_sync:
            conn.close()


def _execute_commit(conn: Any, sql: str, row: tuple[Any, ...] | None = None) -> None:
    conn.execute(sql, row)
    conn.commit()
