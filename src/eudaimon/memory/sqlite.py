"""`SqliteMemory`: thread history in a SQLite file that outlives the process.

All SQLite work runs on one dedicated thread that owns the connection, so the event loop never
blocks on disk. Every message a thread receives is kept (that is what makes adds idempotent for
ever, and it lets any process that opens the file see the same history); an optional window
limits what `get_messages` returns, reading only the newest rows, so a read costs the same with
ten messages stored or ten million.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

from eudaimon.core.messages import Message, Role
from eudaimon.memory._codec import message_from_json, message_to_json
from eudaimon.memory._groups import opens_group, visible
from eudaimon.memory.base import check_window, thread_key, with_id

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS eudaimon_memory (
    session TEXT NOT NULL,
    thread TEXT NOT NULL,
    pos INTEGER NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session, thread, pos),
    UNIQUE (session, thread, id)
)
"""
# One statement, so it is atomic on its own: the next position and the idempotency check (the
# UNIQUE id) are decided under the same write lock, even with several processes on one file.
_INSERT = """
INSERT OR IGNORE INTO eudaimon_memory (session, thread, pos, id, role, body)
SELECT ?, ?, COALESCE(MAX(pos), -1) + 1, ?, ?, ? FROM eudaimon_memory WHERE session = ? AND thread = ?
"""
_WHERE = "WHERE session = ? AND thread = ?"


class _Database:
    """A SQLite connection and the one thread allowed to use it."""

    def __init__(self, executor: ThreadPoolExecutor, connection: sqlite3.Connection, path: str) -> None:
        self._executor = executor
        self._connection = connection
        self.path = path
        self.closed = False

    @classmethod
    async def open(cls, path: str) -> _Database:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eudaimon-sqlite-memory")
        try:
            connection = await asyncio.get_running_loop().run_in_executor(executor, _connect, path)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, connection, path)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self.closed:
            raise RuntimeError(f"SqliteMemory({self.path!r}) is closed")
        return await asyncio.get_running_loop().run_in_executor(self._executor, partial(fn, self._connection, *args))

    async def close(self) -> None:
        if self.closed:
            return
        await self.run(sqlite3.Connection.close)
        self.closed = True
        self._executor.shutdown(wait=True)


def _connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA busy_timeout = 5000")
        if path != ":memory:":
            connection.execute("PRAGMA journal_mode = WAL")
            # Memory is rebuilt from the journal if need be, so WAL's NORMAL sync is enough.
            connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(_SCHEMA)
    except BaseException:
        connection.close()
        raise
    return connection


class SqliteMemory:
    """Thread history persisted in SQLite; survives restarts and is shared by processes on one file.

    Build it with `await SqliteMemory.open(path)` or `await SqliteMemory.in_memory()`, and
    `close()` it (or use `async with`). `with_session_id(session_id)` gives a memory for
    another session on the same connection; sessions and threads are both namespaces.

    Args:
        max_messages: If set, `get_messages` returns at most this many of the newest messages,
            in whole groups (more only when the newest group alone is larger). Everything stays
            stored either way.
    """

    def __init__(self, database: _Database, *, session_id: str = "default", max_messages: int | None = None) -> None:
        check_window("max_messages", max_messages)
        self._db = database
        self.session_id = session_id
        self.max_messages = max_messages

    @classmethod
    async def open(
        cls, path: str | os.PathLike[str], *, session_id: str = "default", max_messages: int | None = None
    ) -> SqliteMemory:
        """Open (creating if needed) the SQLite file at `path`."""
        return cls(await _Database.open(os.fspath(path)), session_id=session_id, max_messages=max_messages)

    @classmethod
    async def in_memory(cls, *, session_id: str = "default", max_messages: int | None = None) -> SqliteMemory:
        """A private in-memory database, lost when closed; for tests and development."""
        return cls(await _Database.open(":memory:"), session_id=session_id, max_messages=max_messages)

    def with_session_id(self, session_id: str) -> SqliteMemory:
        """A memory scoped to `session_id`, sharing this one's connection and window."""
        return SqliteMemory(self._db, session_id=session_id, max_messages=self.max_messages)

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        return await self._db.run(_read, self.session_id, thread_key(thread_id), self.max_messages)

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        await self.add_messages((message,), thread_id)

    async def add_messages(self, messages: Sequence[Message], thread_id: str | None = None) -> None:
        """`add_message` for each, in order, in one transaction: all are added or none."""
        session, thread = self.session_id, thread_key(thread_id)
        rows = [
            (session, thread, m.id, m.role.value, message_to_json(m), session, thread) for m in map(with_id, messages)
        ]
        if rows:
            await self._db.run(_insert_all, rows)

    async def clear(self, thread_id: str | None = None) -> None:
        await self._db.run(_execute, f"DELETE FROM eudaimon_memory {_WHERE}", (self.session_id, thread_key(thread_id)))

    async def close(self) -> None:
        """Close the connection, which every memory made by `with_session_id` shares."""
        await self._db.close()

    async def __aenter__(self) -> SqliteMemory:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"SqliteMemory({self._db.path!r}, session_id={self.session_id!r}, max_messages={self.max_messages})"


def _execute(connection: sqlite3.Connection, sql: str, params: tuple[str, ...]) -> None:
    connection.execute(sql, params)


def _insert_all(connection: sqlite3.Connection, rows: list[tuple[str, ...]]) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(_INSERT, rows)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _read(connection: sqlite3.Connection, session: str, thread: str, limit: int | None) -> list[Message]:
    connection.execute("BEGIN")  # one snapshot, even when a window needs a second query
    try:
        if limit is None:
            rows = connection.execute(f"SELECT body FROM eudaimon_memory {_WHERE} ORDER BY pos", (session, thread))
            bodies = [body for (body,) in rows]
        else:
            bodies = _read_window(connection, session, thread, limit)
    finally:
        connection.execute("COMMIT")
    return visible([message_from_json(body) for body in bodies])


def _read_window(connection: sqlite3.Connection, session: str, thread: str, limit: int) -> list[str]:
    """The bodies of the newest `limit` rows, less the results of a group cut by the window; or,
    when the window falls inside the newest group, that whole group."""
    rows: list[tuple[int, str, str]] = connection.execute(
        f"SELECT pos, role, body FROM eudaimon_memory {_WHERE} ORDER BY pos DESC LIMIT ?", (session, thread, limit)
    ).fetchall()
    rows.reverse()
    # Leading tool results belong to a call before the window: their group is not whole in it.
    start = next((i for i, (_, role, _) in enumerate(rows) if role != Role.TOOL.value), len(rows))
    if start < len(rows) or not rows:
        return [body for _, _, body in rows[start:]]
    (head,) = connection.execute(
        f"SELECT MAX(pos) FROM eudaimon_memory {_WHERE} AND pos < ? AND role != 'tool'", (session, thread, rows[0][0])
    ).fetchone()
    if head is None:
        return []
    group = connection.execute(
        f"SELECT body FROM eudaimon_memory {_WHERE} AND pos >= ? ORDER BY pos", (session, thread, head)
    ).fetchall()
    return [body for (body,) in group] if opens_group(message_from_json(group[0][0])) else []
