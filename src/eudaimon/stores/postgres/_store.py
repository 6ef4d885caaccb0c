"""`PostgresStore`: the journal in PostgreSQL, shared by every machine that reaches the server.

Why it is built this way:

- psycopg 3, async, with one `AsyncConnectionPool` per event loop. A pool's tasks and locks
  belong to the loop that opened it, so the store opens a pool lazily, on first use in a loop,
  and never at construction (which needs no loop). A small task closes the pool when its loop
  ends (`asyncio.run` cancels it on the way out), so a store nobody closed neither hangs the
  loop's shutdown nor leaks connections; a new loop simply gets a new pool. A loop still
  running in another thread keeps its own pool.
- The schema is created (or upgraded from version 1) on first use, once per store, on a
  connection of its own, in one transaction holding a PostgreSQL advisory lock: two processes
  starting at once do not race their `CREATE … IF NOT EXISTS` into a catalog conflict.
- A write is one autocommit statement (see `_sql`), so an append of a step is one round trip and
  one commit; PostgreSQL already shares one WAL flush among commits that arrive together (its
  own group commit), so the store needs no queue of its own. An append that stores long texts
  or history messages (`_content`), or a snapshot, is one transaction of a few statements.
- The DSN may hold a password: it is kept private, the repr shows host and database only, and
  connection errors are re-raised as `JournalError`s naming host and database, never the DSN.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, CorruptEvent, JournalError, LeaseHeld
from eudaimon.core.events import Event
from eudaimon.stores.base import Lease, RunSummary, Snapshot, check_batch, summary_fields
from eudaimon.stores.packing import PackedBatch, Row, pack
from eudaimon.stores.postgres import _content
from eudaimon.stores.postgres._dsn import parse_dsn
from eudaimon.stores.postgres._sql import LOCK_CLASS, SCHEMA_VERSION, Statements

_Connection = AsyncConnection[TupleRow]
_Pool = AsyncConnectionPool[_Connection]

_CONNECT_TIMEOUT_S = 10
"""libpq waits forever for an unreachable host by default; a journal should say so instead."""
_LEASE_TRIES = 5
"""A lease seen held, then gone before we could read its holder, is taken again; this bounds it."""


@dataclass(eq=False)
class _LoopPool:
    """The pool that serves one event loop, every connection it opened, and the task that
    closes it when the loop ends."""

    loop: asyncio.AbstractEventLoop
    opening: asyncio.Lock = field(default_factory=asyncio.Lock)
    released: asyncio.Event = field(default_factory=asyncio.Event)
    pool: _Pool | None = None
    closer: asyncio.Task[None] | None = None
    connections: weakref.WeakSet[_Connection] = field(default_factory=weakref.WeakSet)

    async def track(self, conn: _Connection) -> None:
        self.connections.add(conn)

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


class PostgresStore:
    """The journal in a PostgreSQL schema; many processes on many machines may share it.

    Args:
        dsn: A libpq DSN: `postgresql://user:password@host:5432/db` (or `postgres://…`, or
            `host=… dbname=…` pairs). It is never shown: not in the repr, not in errors.
        schema: The schema holding the store's tables, created on first use if missing.
        min_size: Connections each pool keeps open.
        max_size: Connections each pool may open at most (one per concurrent operation).

    Raises:
        ConfigurationError: the DSN does not parse, the schema is not a plain identifier, or
            the pool sizes are impossible.
    """

    def __init__(self, dsn: str, *, schema: str = "eudaimon", min_size: int = 1, max_size: int = 10) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ConfigurationError(
                f"PostgresStore min_size={min_size}, max_size={max_size}; need 0 <= min <= max, max >= 1"
            )
        self._dsn = dsn
        self._target = parse_dsn(dsn)
        self._sql = Statements.for_schema(schema)
        self._min_size = min_size
        self._max_size = max_size
        self._connect_kwargs: dict[str, Any] = {"autocommit": True}
        if not self._target.sets_connect_timeout:
            self._connect_kwargs["connect_timeout"] = _CONNECT_TIMEOUT_S
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._pools_lock = threading.Lock()  # a store may serve loops in several threads
        self._schema_ready = False
        self._closed = False
        self._commits = 0

    @property
    def schema(self) -> str:
        return self._sql.schema

    @property
    def commit_count(self) -> int:
        """Transactions this store committed that wrote something: one per append; refused
        appends, lost lease races and reads cost none."""
        return self._commits

    async def append(
        self, run_id: str, expected_seq: int, events: Sequence[Event], snapshot: Snapshot | None = None
    ) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`; `snapshot`, if
        given, is kept in the same transaction.

        Raises:
            ConcurrencyConflict: another writer appended first; nothing was written.
            CorruptEvent: the batch does not follow on from `expected_seq`.
            JournalError: the database failed or cannot be reached, or the store is closed.
        """
        batch = tuple(events)
        if not batch:
            self._check_open()
            return
        try:
            check_batch(run_id, expected_seq, batch)
        except CorruptEvent:
            actual = await self._next_seq(run_id)  # a stale writer hears "conflict" first, as everywhere
            if actual != expected_seq:
                raise ConcurrencyConflict(run_id, expected_seq, actual) from None
            raise
        packed = pack(batch)  # encoded before any connection is taken
        params = _append_params(run_id, expected_seq, batch, packed)
        async with self._connection() as conn:
            try:
                appended = await self._append(conn, params, packed, snapshot)
            except psycopg.errors.UniqueViolation:
                # `runs` disagrees with `events` (a hand edit, a foreign writer): the key still fences.
                top = await conn.execute(self._sql.top_seq, (run_id,))
                row = await top.fetchone()
                raise ConcurrencyConflict(run_id, expected_seq, int(row[0]) if row else 0) from None
            if appended:
                self._commits += 1
                return
        raise ConcurrencyConflict(run_id, expected_seq, await self._next_seq(run_id))

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run.

        Raises:
            CorruptEvent, UnknownEventType: a row does not parse, or names a text or message the
                store does not have; it names the run and the seq.
        """
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.load, (run_id, after_seq))).fetchall()
            return await _content.load(conn, self._sql, run_id, _written_rows(run_id, rows), after_seq)

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first (ties: oldest run first, as `MemoryStore`); times in UTC."""
        query, args = (
            (self._sql.list_runs, (limit,)) if thread_id is None else (self._sql.list_thread_runs, (thread_id, limit))
        )
        async with self._connection() as conn:
            rows = await (await conn.execute(query, args)).fetchall()
        return [
            RunSummary(run, agent, thread, created.astimezone(UTC), updated.astimezone(UTC), count, last)
            for run, agent, thread, created, updated, count, last in rows
        ]

    async def delete_run(self, run_id: str) -> None:
        """Remove the run's events, summary and `run:<id>` snapshot, and the texts and messages
        no other run reaches, in one transaction."""
        async with self._connection() as conn, conn.transaction():
            released = await _content.release(conn, self._sql, run_id)
            row = await (await conn.execute(self._sql.delete_run, {"run": run_id, "key": f"run:{run_id}"})).fetchone()
        if released or (row is not None and row[0]):
            self._commits += 1

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        """Take or renew the lease `name` for `owner` for `ttl_s` seconds of the SERVER's clock.

        Raises:
            LeaseHeld: another owner holds it and it has not expired (by the server's clock).
        """
        async with self._connection() as conn:
            for _ in range(_LEASE_TRIES):
                taken = await conn.execute(self._sql.take_lease, (name, owner, ttl_s))
                if taken.rowcount == 1:
                    self._commits += 1
                    return Lease(name, owner, ttl_s)
                holder = await (await conn.execute(self._sql.lease_holder, (name,))).fetchone()
                if holder is not None and holder[0] != owner and holder[1] > 0:
                    raise LeaseHeld(name, holder[0], float(holder[1]))
                # Released or expired between the two statements: try to take it again.
        raise JournalError(f"the lease {name} changed hands {_LEASE_TRIES} times while {owner} tried to take it")

    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up if `owner` holds it; another owner's lease is left alone."""
        async with self._connection() as conn:
            released = await conn.execute(self._sql.release_lease, (name, owner))
            if released.rowcount:
                self._commits += 1

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` as the latest for its key unless a newer version is already kept."""
        async with self._connection() as conn:
            saved = await conn.execute(self._sql.save_snapshot, (snapshot.key, snapshot.version, snapshot.data))
            if saved.rowcount:
                self._commits += 1

    async def load_snapshot(self, key: str) -> Snapshot | None:
        async with self._connection() as conn:
            row = await (await conn.execute(self._sql.load_snapshot, (key,))).fetchone()
        return None if row is None else Snapshot(key, int(row[0]), row[1])

    async def delete_snapshots(self) -> int:
        """Drop every snapshot; returns how many. Only speed changes."""
        async with self._connection() as conn:
            count = (await conn.execute(self._sql.delete_snapshots)).rowcount
        if count:
            self._commits += 1
        return max(count, 0)

    async def close(self) -> None:
        """Close every pool: the current loop's is awaited, a closed loop's sockets are shut."""
        with self._pools_lock:
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

    def __repr__(self) -> str:
        return f"PostgresStore(host={self._target.host!r}, db={self._target.dbname!r}, schema={self.schema!r})"

    # -- connections -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self!r} is closed; open a new store to use this journal")

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[_Connection]:
        """A pooled connection; driver errors leave as `JournalError`s that hide the DSN."""
        pool = await self._pool()
        try:
            conn = await pool.getconn()
        except psycopg.Error as exc:
            raise self._target.unreachable(exc) from None
        try:
            yield conn
        except psycopg.Error as exc:
            raise self._target.failed(self.schema, exc) from exc
        finally:
            await pool.putconn(conn)

    async def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        with self._pools_lock:
            self._check_open()
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
                if not self._schema_ready:
                    await self._create_schema()
                    self._schema_ready = True
                pool: _Pool = AsyncConnectionPool(
                    self._dsn,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    kwargs=self._connect_kwargs,
                    configure=bound.track,
                    name=f"eudaimon-{self._target}",
                    open=False,
                )
                try:
                    await pool.open(wait=True, timeout=_CONNECT_TIMEOUT_S)
                except psycopg.Error as exc:
                    await pool.close()
                    raise self._target.unreachable(exc) from None
                bound.pool = pool
                bound.closer = loop.create_task(bound.close_with_loop(), name=f"eudaimon-{self._target}-closer")
            return bound.pool

    async def _create_schema(self) -> None:
        try:
            conn = await AsyncConnection.connect(self._dsn, **self._connect_kwargs)
        except psycopg.Error as exc:
            raise self._target.unreachable(exc) from None
        try:
            async with conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS, self.schema))
                exists = await (await conn.execute("SELECT to_regclass(%s)", (self._sql.meta_table,))).fetchone()
                if exists is None or exists[0] is None:
                    for statement in self._sql.ddl:
                        await conn.execute(statement)
                version = await self._schema_version(conn)
                if version == 1:  # texts and messages inline: add their tables, the rows read as they are
                    for statement in self._sql.upgrade_from_1:
                        await conn.execute(statement)
                    version = await self._schema_version(conn)
        except psycopg.Error as exc:
            raise self._target.failed(self.schema, exc) from exc
        if version != SCHEMA_VERSION:
            raise JournalError(
                f"the PostgreSQL journal at {self._target} (schema {self.schema}) has schema version {version}; "
                f"this eudaimon reads version {SCHEMA_VERSION} — upgrade eudaimon, or use another schema"
            )

    async def _append(
        self, conn: _Connection, params: dict[str, Any], packed: PackedBatch, snapshot: Snapshot | None
    ) -> bool:
        """Claim the run and write the batch; whether the claim held (if not, nothing is written)."""
        content = bool(packed.texts or packed.messages)
        first = params["expected"] == 0
        if not content and snapshot is None:  # most steps: one autocommit statement, one round trip
            sql = self._sql.create_run if first else self._sql.extend_run
            return (await conn.execute(sql, params)).rowcount == len(params["seqs"])
        async with conn.transaction():
            if content:
                params = {**params, **await _content.store(conn, self._sql, packed)}
                sql = self._sql.create_run_content if first else self._sql.extend_run_content
            else:
                sql = self._sql.create_run if first else self._sql.extend_run
            appended = (await conn.execute(sql, params)).rowcount == len(params["seqs"])
            if not appended:
                raise psycopg.Rollback  # the messages inserted for the batch go too
            if snapshot is not None:
                await conn.execute(self._sql.save_snapshot, (snapshot.key, snapshot.version, snapshot.data))
        return appended

    async def _schema_version(self, conn: _Connection) -> int:
        row = await (await conn.execute(self._sql.schema_version)).fetchone()
        return int(row[0]) if row else 0

    async def _next_seq(self, run_id: str) -> int:
        async with self._connection() as conn:
            row = await (await conn.execute(self._sql.next_seq, (run_id,))).fetchone()
        return int(row[0]) if row else 0


def _append_params(run_id: str, expected_seq: int, batch: Sequence[Event], packed: PackedBatch) -> dict[str, Any]:
    """The parameters of the append statements (an append with content replaces the payloads)."""
    agent, thread_id = summary_fields(batch)
    last = batch[-1]
    return {
        "run": run_id,
        "expected": expected_seq,
        "next": expected_seq + len(batch),
        "agent": agent,
        "thread": thread_id,
        "created": _instant(batch[0].at),
        "updated": _instant(last.at),
        "last": last.type,
        "seqs": [e.seq for e in batch],
        "ats": [_instant(e.at) for e in batch],
        "offsets": [e.at.utcoffset() for e in batch],
        "types": [e.type for e in batch],
        "payloads": [] if packed.messages else packed.payloads(),  # with messages: once they are numbered
    }


def _written_rows(run_id: str, rows: Sequence[tuple[Any, ...]]) -> list[Row]:
    """Loaded rows as `StoredRows` reads them: each time as its writer gave it, in ISO 8601."""
    written: list[Row] = []
    for seq, at, at_offset, tag, payload in rows:
        try:
            iso = _as_written(at, at_offset).isoformat()
        except (TypeError, ValueError, OverflowError) as exc:  # an offset written by hand
            raise CorruptEvent(run_id, seq, f"bad time {at!r} {at_offset!r}: {exc}", event_type=tag) from exc
        written.append((seq, iso, tag, payload))
    return written


def _instant(at: datetime) -> datetime:
    """An aware time for a timestamptz column: a naive one is taken as UTC (its offset stays NULL)."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _as_written(at: datetime, offset: timedelta | None) -> datetime:
    """The time as its writer gave it: with its own UTC offset, or naive if it was naive."""
    if offset is None:
        return at.astimezone(UTC).replace(tzinfo=None)
    return at.astimezone(timezone(offset))
