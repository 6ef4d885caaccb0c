"""The store's connections: one `AsyncConnectionPool` per event loop, opened lazily, closed with it.

Why it is built this way:

- A pool's tasks and locks belong to the loop that opened it, so a pool is opened lazily, on
  first use in a loop, and never at construction (which needs no loop). A small task closes the
  pool when its loop ends (`asyncio.run` cancels it on the way out), so a store nobody closed
  neither hangs the loop's shutdown nor leaks connections; a new loop simply gets a new pool. A
  loop still running in another thread keeps its own pool.
- Before the first pool opens, the store gets to prepare the schema (`prepare`), once per set of
  pools, so a journal that cannot be used is reported before any connection is pooled.
- Driver errors leave as `JournalError`s that name host and database, never the DSN.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from eudaimon.core.errors import JournalError
from eudaimon.stores.postgres._dsn import Target

Connection = AsyncConnection[TupleRow]
_Pool = AsyncConnectionPool[Connection]

CONNECT_TIMEOUT_S = 10
"""libpq waits forever for an unreachable host by default; a journal should say so instead."""


@dataclass(eq=False)
class _LoopPool:
    """The pool that serves one event loop, every connection it opened, and the task that
    closes it when the loop ends."""

    loop: asyncio.AbstractEventLoop
    opening: asyncio.Lock = field(default_factory=asyncio.Lock)
    released: asyncio.Event = field(default_factory=asyncio.Event)
    pool: _Pool | None = None
    closer: asyncio.Task[None] | None = None
    connections: weakref.WeakSet[Connection] = field(default_factory=weakref.WeakSet)

    async def close_with_loop(self) -> None:
        """Wait for `release()` or for the loop's end, then close the pool.

        `asyncio.run` cancels every task before closing its loop and waits for them all; a pool
        still open then can hang it (psycopg_pool's workers survive a cancel that lands while
        they connect). This task is cancelled with the others and closes the pool right there,
        which stops those workers: a caller who never closes the store still gets its
        `asyncio.run` back.
        """
        try:
            await self.released.wait()
        finally:
            if self.pool is not None:
                try:
                    await self.pool.close()  # connections in use close when they are returned
                except BaseException:
                    self.abandon()
                    raise

    async def release(self) -> None:
        self.released.set()
        if self.closer is not None:
            await self.closer
        else:
            self.abandon()

    def abandon(self) -> None:
        """Close every socket the pool opened without awaiting anything (`PQfinish` still says
        goodbye to the server): for a loop that is gone, or a pool close() that was cut short."""
        for conn in list(self.connections):
            conn.pgconn.finish()


class LoopPools:
    """The pools of one store, one per event loop that uses it.

    Args:
        dsn: The libpq DSN (kept here, never shown).
        target: What of the DSN may be shown, for errors.
        describe: The store's repr, for the "closed" error.
        min_size, max_size: Each pool's bounds.
        connect_kwargs: Keyword arguments of every connection (autocommit, timeouts).
        setup: Statements every new connection runs once (session settings), before use.
        prepare: Awaited once before the first pool opens (the schema); retried on failure.
    """

    def __init__(
        self,
        dsn: str,
        target: Target,
        *,
        describe: Callable[[], str],
        min_size: int,
        max_size: int,
        connect_kwargs: dict[str, Any],
        setup: tuple[str, ...],
        prepare: Callable[[], Awaitable[None]],
    ) -> None:
        self._dsn = dsn
        self._target = target
        self._describe = describe
        self._min_size = min_size
        self._max_size = max_size
        self.connect_kwargs = connect_kwargs
        self._setup = setup
        self._prepare = prepare
        self._prepared = False
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._lock = threading.Lock()  # a store may serve loops in several threads
        self._closed = False

    def check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self._describe()} is closed; open a new store to use this journal")

    async def connect(self) -> Connection:
        """A connection of its own, outside every pool, set up like theirs (the caller closes it)."""
        try:
            conn = await AsyncConnection.connect(self._dsn, **self.connect_kwargs)
        except psycopg.Error as exc:
            raise self._target.unreachable(exc) from None
        try:
            await self._configure(conn)
        except BaseException:
            await conn.close()
            raise
        return conn

    @asynccontextmanager
    async def connection(self, schema: str) -> AsyncIterator[Connection]:
        """A pooled connection; driver errors leave as `JournalError`s that hide the DSN."""
        pool = await self._pool()
        try:
            conn = await pool.getconn()
        except psycopg.Error as exc:
            raise self._target.unreachable(exc) from None
        try:
            yield conn
        except psycopg.Error as exc:
            raise self._target.failed(schema, exc) from exc
        finally:
            await pool.putconn(conn)

    async def close(self) -> None:
        """Close every pool: the current loop's is awaited, a closed loop's sockets are shut."""
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
        current = asyncio.get_running_loop()
        for bound in pools:
            if bound.loop is current:
                await bound.release()
            elif bound.loop.is_running():  # alive in another thread: close it there
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(bound.release(), bound.loop))
            else:
                bound.abandon()

    async def _configure(self, conn: Connection) -> None:
        for statement in self._setup:
            await conn.execute(statement)

    async def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        with self._lock:
            self.check_open()
            bound = self._pools.get(loop)
            if bound is None:
                for old in [b for b in self._pools.values() if b.loop.is_closed()]:
                    del self._pools[old.loop]
                    old.abandon()
                bound = self._pools[loop] = _LoopPool(loop)
        if bound.pool is not None:
            return bound.pool
        async with bound.opening:
            if bound.pool is None:
                if not self._prepared:
                    await self._prepare()
                    self._prepared = True

                async def configure(conn: Connection) -> None:
                    bound.connections.add(conn)
                    await self._configure(conn)

                pool: _Pool = AsyncConnectionPool(
                    self._dsn,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    kwargs=self.connect_kwargs,
                    configure=configure,
                    name=f"eudaimon-{self._target}",
                    open=False,
                )
                try:
                    await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
                except psycopg.Error as exc:
                    await pool.close()
                    raise self._target.unreachable(exc) from None
                bound.pool = pool
                bound.closer = loop.create_task(bound.close_with_loop(), name=f"eudaimon-{self._target}-closer")
            return bound.pool
