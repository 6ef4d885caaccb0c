"""`PostgresStore`: the journal in PostgreSQL, shared by every machine that reaches the server.

Why it is built this way:

- psycopg 3, async, with one `AsyncConnectionPool` per event loop (`_pools`), opened lazily.
- The schema is created (or upgraded from version 1) on first use, once per store (`_schema`).
- A write is one autocommit statement (see `_sql`), so an append of a step is one round trip and
  one commit; PostgreSQL already shares one WAL flush among commits that arrive together (its
  own group commit), so the store needs no queue of its own. An append that stores long texts
  or history messages (`_content`), or a snapshot, is one transaction of a few statements.
- The DSN may hold a password: it is kept private, the repr shows host and database only, and
  connection errors are re-raised as `JournalError`s naming host and database, never the DSN.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg

from eudaimon.core.errors import (
    ConcurrencyConflict,
    ConfigurationError,
    CorruptEvent,
    EudaimonError,
    JournalError,
    LeaseHeld,
    LeaseLost,
)
from eudaimon.core.events import Event
from eudaimon.core.run_index import RunRow
from eudaimon.stores.base import Fence, Lease, RunSummary, Snapshot, check_batch, summary_fields
from eudaimon.stores.index import DayRow, LastRows, RunQuery, parsed_row
from eudaimon.stores.packing import PackedBatch, Row, pack
from eudaimon.stores.postgres import _content, _index, _schema
from eudaimon.stores.postgres._dsn import parse_dsn
from eudaimon.stores.postgres._pools import CONNECT_TIMEOUT_S, Connection, LoopPools
from eudaimon.stores.postgres._sql import Statements
from eudaimon.stores.records import Record

STALLED_TRANSACTION_TIMEOUT_S = 5.0
"""Our transactions are a few statements sent back to back: a pause this long is a stall."""
logger = logging.getLogger("eudaimon.stores")
_LEASE_TRIES = 5
"""A lease seen held, then gone before we could read its holder, is taken again; this bounds it."""


class PostgresStore:
    """The journal in a PostgreSQL schema; many processes on many machines may share it.

    Args:
        dsn: A libpq DSN: `postgresql://user:password@host:5432/db` (or `postgres://…`, or
            `host=… dbname=…` pairs). It is never shown: not in the repr, not in errors.
        schema: The schema holding the store's tables, created on first use if missing.
        min_size: Connections each pool keeps open.
        max_size: Connections each pool may open at most (one per concurrent operation).
        stalled_transaction_timeout_s: How long one of the store's transactions may wait for
            its process between statements before the server ends its session (rolling it back,
            so the commit fails): a stopped process must not hold its row locks, and so every
            other writer of those rows, for as long as it is stopped.
        read_only: Only read an existing journal: nothing is created or upgraded (a missing
            schema is a `JournalError` saying so), every write is refused before it is sent, and
            every session is read-only on the server too (`default_transaction_read_only`), so
            no statement can write whatever the store sends.

    Raises:
        ConfigurationError: the DSN does not parse, the schema is not a plain identifier, or
            the pool sizes are impossible.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "eudaimon",
        min_size: int = 1,
        max_size: int = 10,
        read_only: bool = False,
        stalled_transaction_timeout_s: float = STALLED_TRANSACTION_TIMEOUT_S,
    ) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ConfigurationError(
                f"PostgresStore min_size={min_size}, max_size={max_size}; need 0 <= min <= max, max >= 1"
            )
        if not stalled_transaction_timeout_s > 0:
            raise ConfigurationError(
                f"PostgresStore stalled_transaction_timeout_s={stalled_transaction_timeout_s}; need > 0 seconds"
            )
        self._target = parse_dsn(dsn)
        self._sql = Statements.for_schema(schema)
        connect_kwargs: dict[str, Any] = {"autocommit": True}
        if not self._target.sets_connect_timeout:
            connect_kwargs["connect_timeout"] = CONNECT_TIMEOUT_S
        self._pools = LoopPools(
            dsn,
            self._target,
            describe=self.__repr__,
            min_size=min_size,
            max_size=max_size,
            connect_kwargs=connect_kwargs,
            setup=(
                # A process stopped inside a transaction (SIGSTOP, a VM pause) keeps its row locks
                # for as long as its session lives: the server ends such a session instead.
                f"SET idle_in_transaction_session_timeout = {max(1, round(stalled_transaction_timeout_s * 1000))}",
                *(("SET default_transaction_read_only = on",) if read_only else ()),
            ),
            prepare=self._check_schema if read_only else self._create_schema,
        )
        self._read_only = read_only
        self._commits = 0
        self._rows = LastRows()

    @property
    def schema(self) -> str:
        return self._sql.schema

    @property
    def commit_count(self) -> int:
        """Transactions this store committed that wrote something: one per append; refused
        appends, lost lease races and reads cost none."""
        return self._commits

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`; `snapshot`, if
        given, is kept in the same transaction.

        Raises:
            ConcurrencyConflict: another writer appended first; nothing was written.
            LeaseLost: a `fence` was given and its lease lapsed or another owner holds it
                (checked in the append's own statement); nothing was written.
            CorruptEvent: the batch does not follow on from `expected_seq`.
            JournalError: the database failed or cannot be reached, or the store is closed.
        """
        batch = tuple(events)
        self._check_writable()
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
        row = self._rows.following(run_id, expected_seq, batch) or await self._row_after(run_id, expected_seq, batch)
        params.update(_index.params(row))
        params["lease"], params["owner"] = (fence.name, fence.owner) if fence is not None else (None, None)
        params["lease_ttl"] = fence.ttl_s if fence is not None else 0.0
        async with self._connection() as conn:
            sent = time.monotonic()  # before the commit is sent: a lease it takes back holds from here
            try:
                appended, retaken, indexed = await self._append(conn, params, packed, snapshot)
            except psycopg.errors.UniqueViolation:
                # `runs` disagrees with `events` (a hand edit, a foreign writer): the key still fences.
                top = await conn.execute(self._sql.top_seq, (run_id,))
                found = await top.fetchone()
                raise ConcurrencyConflict(run_id, expected_seq, int(found[0]) if found else 0) from None
        if appended:
            self._commits += 1
            if not indexed:  # the index row was out of step (a hand edit, an interrupted upgrade)
                row = await self._reindex(run_id)
            self._rows.keep(row)
            if retaken and fence is not None and fence.taken_back is not None:
                fence.taken_back(sent)
            return
        actual = await self._next_seq(run_id)
        if fence is not None and actual == expected_seq:
            raise LeaseLost(fence.name)  # the seq was free: the fence refused it
        raise ConcurrencyConflict(run_id, expected_seq, actual)

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

    async def query_runs(self, query: RunQuery) -> list[RunRow]:
        """The run index's rows `query` asks for, most recently updated first (one indexed query)."""
        sql, args = _index.query(self._sql.quoted, query)
        async with self._connection() as conn:
            rows = await (await conn.execute(sql, args)).fetchall()
        return [RunRow.from_json(body) for (body,) in rows]

    async def run_row(self, run_id: str) -> RunRow | None:
        async with self._connection() as conn:
            found = await (await conn.execute(self._sql.index_row, (run_id,))).fetchone()
        return None if found is None else RunRow.from_json(found[0])

    async def dashboard(self, since: datetime, agent: str | None = None) -> list[DayRow]:
        """Per agent and UTC day of creation since `since`, from the index (GROUP BY, percentile_disc)."""
        args = {"since": since, "agent": agent}
        async with self._connection() as conn:
            groups = await (await conn.execute(self._sql.days, args)).fetchall()
            ranks = await (await conn.execute(self._sql.percentiles, args)).fetchall()
        return _index.day_rows(groups, ranks)

    async def delete_run(self, run_id: str) -> None:
        """Remove the run's events, summary and `run:<id>` snapshot, and the texts and messages
        no other run reaches, in one transaction."""
        self._check_writable()
        self._rows.forget(run_id)
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
        self._check_writable()
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

    async def lease_holders(self, names: Sequence[str]) -> dict[str, Lease]:
        """The leases among `names` held unexpired now (by the server's clock), each with the
        time it has left."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.lease_holders, (wanted,))).fetchall()
        return {str(name): Lease(str(name), str(owner), float(left)) for name, owner, left in rows}

    async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
        """Renew every (name, owner) still naming that owner, lapsed or not, in one statement
        (by the server's clock): which were renewed."""
        self._check_writable()
        pairs = list(leases)
        if not pairs:
            return []
        names, owners = [name for name, _ in pairs], [owner for _, owner in pairs]
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.renew_leases, (ttl_s, names, owners))).fetchall()
        renewed = {(str(name), str(owner)) for name, owner in rows}
        return [pair in renewed for pair in pairs]

    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up if `owner` holds it; another owner's lease is left alone."""
        self._check_writable()
        async with self._connection() as conn:
            released = await conn.execute(self._sql.release_lease, (name, owner))
            if released.rowcount:
                self._commits += 1

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` as the latest for its key unless a newer version is already kept."""
        self._check_writable()
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
        self._check_writable()
        async with self._connection() as conn:
            count = (await conn.execute(self._sql.delete_snapshots)).rowcount
        if count:
            self._commits += 1
        return max(count, 0)

    async def put_record(
        self, kind: str, key: str, body: str, *, only_new: bool = False, expected: str | None = None
    ) -> bool:
        self._check_writable()
        statements = self._sql.records
        async with self._connection() as conn:
            if expected is not None:
                cursor = await conn.execute(statements.put_over, (body, kind, key, expected))
            else:
                cursor = await conn.execute(statements.put_new if only_new else statements.put, (kind, key, body))
            written = cursor.rowcount > 0
        if written:
            self._commits += 1
        return written

    async def load_records(self, kind: str, *, limit: int = 10_000) -> list[Record]:
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.records.load_all, (kind, limit))).fetchall()
        return [Record(kind, key, body) for key, body in rows]

    async def load_record(self, kind: str, key: str) -> Record | None:
        async with self._connection() as conn:
            row = await (await conn.execute(self._sql.records.load_one, (kind, key))).fetchone()
        return None if row is None else Record(kind, key, row[0])

    async def delete_record(self, kind: str, key: str) -> bool:
        self._check_writable()
        async with self._connection() as conn:
            deleted = (await conn.execute(self._sql.records.delete, (kind, key))).rowcount > 0
        if deleted:
            self._commits += 1
        return deleted

    async def close(self) -> None:
        """Close every pool: the current loop's is awaited, a closed loop's sockets are shut."""
        await self._pools.close()

    def __repr__(self) -> str:
        shown = f"host={self._target.host!r}, db={self._target.dbname!r}, schema={self.schema!r}"
        return f"PostgresStore({shown}{', read_only=True' if self._read_only else ''})"

    # -- connections -----------------------------------------------------------------------

    def _check_open(self) -> None:
        self._pools.check_open()

    def _connection(self) -> AbstractAsyncContextManager[Connection]:
        return self._pools.connection(self.schema)

    def _check_writable(self) -> None:
        if self._read_only:
            raise JournalError(
                f"the PostgreSQL journal at {self._target} (schema {self.schema}) was opened read-only; "
                "open it without read_only to write"
            )

    async def _create_schema(self) -> None:
        conn = await self._pools.connect()
        async with conn:
            await _schema.create(conn, self._sql, self._target, self._backfill)

    async def _backfill(self, conn: Connection) -> None:
        """Index every run the index lacks, from its journal (the upgrade of an older schema). A
        run whose journal cannot be read is indexed from its `runs` row, so it stays listed."""
        missing = await (await conn.execute(self._sql.runs_unindexed)).fetchall()
        for run_id, agent, thread_id, created in missing:
            try:
                row = RunRow.of(await self._load_on(conn, run_id))
            except EudaimonError as exc:
                logger.warning("run %s cannot be read to index it (%s); it is listed from its summary", run_id, exc)
                row = RunRow(run_id, agent=agent, thread_id=thread_id, created_at=created, updated_at=created)
            if row is not None:
                await conn.execute(self._sql.upsert_index, {"run": run_id, **_index.params(row)})

    async def _load_on(self, conn: Connection, run_id: str) -> list[Event]:
        rows = await (await conn.execute(self._sql.load, (run_id, -1))).fetchall()
        return await _content.load(conn, self._sql, run_id, _written_rows(run_id, rows), -1)

    async def _row_after(self, run_id: str, expected_seq: int, batch: Sequence[Event]) -> RunRow:
        """The run's index row after `batch`, for a run this store did not append to last: the
        stored row advanced, or the journal folded (raises `ConcurrencyConflict` if the journal
        is not at `expected_seq`, as the claim would)."""
        async with self._connection() as conn:
            found = await (await conn.execute(self._sql.index_row, (run_id,))).fetchone()
            before = parsed_row(found[0]) if found is not None else None
            if before is not None and before.event_count == expected_seq:
                return before.advance(batch)
            events = await self._load_on(conn, run_id)
        if len(events) != expected_seq:
            raise ConcurrencyConflict(run_id, expected_seq, len(events))
        return (RunRow.of(events) or RunRow(run_id)).advance(batch)

    async def _reindex(self, run_id: str) -> RunRow:
        async with self._connection() as conn:
            row = RunRow.of(await self._load_on(conn, run_id)) or RunRow(run_id)
            await conn.execute(self._sql.upsert_index, {"run": run_id, **_index.params(row)})
        return row

    async def _check_schema(self) -> None:
        conn = await self._pools.connect()
        async with conn:
            await _schema.check(conn, self._sql, self._target)

    async def _append(
        self, conn: Connection, params: dict[str, Any], packed: PackedBatch, snapshot: Snapshot | None
    ) -> tuple[bool, bool, bool]:
        """Claim the run and write the batch: whether the claim held (if not, nothing is
        written), whether its fence took a lapsed lease back, and whether the index row was
        advanced with it."""
        content = bool(packed.texts or packed.messages)
        first = params["expected"] == 0
        if not content and snapshot is None:  # most steps: one autocommit statement, one round trip
            sql = self._sql.create_run if first else self._sql.extend_run
            return await _claimed(await conn.execute(sql, params), len(params["seqs"]))
        indexed = False
        async with conn.transaction():
            if content:
                params = {**params, **await _content.store(conn, self._sql, packed)}
                sql = self._sql.create_run_content if first else self._sql.extend_run_content
            else:
                sql = self._sql.create_run if first else self._sql.extend_run
            appended, retaken, indexed = await _claimed(await conn.execute(sql, params), len(params["seqs"]))
            if not appended:
                raise psycopg.Rollback  # the messages inserted for the batch go too
            if snapshot is not None:
                await conn.execute(self._sql.save_snapshot, (snapshot.key, snapshot.version, snapshot.data))
        return appended, retaken, indexed

    async def _next_seq(self, run_id: str) -> int:
        async with self._connection() as conn:
            row = await (await conn.execute(self._sql.next_seq, (run_id,))).fetchone()
        return int(row[0]) if row else 0


async def _claimed(cursor: psycopg.AsyncCursor[Any], events: int) -> tuple[bool, bool, bool]:
    """Whether an append statement inserted all its `events`, whether it took its lease back,
    and whether it advanced the run's index row."""
    if cursor.rowcount != events:
        return False, False, False
    row = await cursor.fetchone()
    return True, bool(row and row[0]), bool(row and row[1])


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
