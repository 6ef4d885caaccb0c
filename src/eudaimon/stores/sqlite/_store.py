"""`SqliteStore`: the embedded default journal — one file, WAL, group commit.

Why it is built this way (the commit worker's own reasons are in `_worker`, the SQL's in `_sql`):

- Every call goes to the commit worker (`_worker`) that every store of the process on the
  file shares: one thread, one connection, writes that queue up while a commit is in progress
  sharing the next one (group commit). No commit, fsync or read runs on an event loop's thread.
- A lease matters only to live processes on this machine, which all read the same page cache,
  so a transaction that only takes, renews or gives up leases commits without an fsync. Every
  lease a process holds is renewed in one statement (`_leases`), and a fenced append (the
  runtime's every commit) checks, as its last statement before COMMIT, that its lease is still
  its owner's and unexpired, so a process that stalled past its lease never lands a commit.
- What a stopped process (SIGSTOP, a paused VM, a debugger) can still block: stopped INSIDE a
  transaction it holds SQLite's write lock, which is a lock on the file, until it continues or
  dies. Every writer of the file (other runs, leases, approvals, in every process) then waits
  `busy_timeout_s` and fails with a `JournalError` saying so; readers go on (WAL). Its commit,
  once it continues, fails if its lease lapsed meanwhile (the check runs after the stop, unless
  the stop fell between that check and COMMIT: microseconds, during which no one could take the
  lease anyway, since taking it needs the lock). Stopped OUTSIDE a transaction it blocks
  nothing: its leases lapse, another process takes its runs over, and its late commits fail
  (`LeaseLost`). A process stopped while reading holds back checkpoints: the WAL grows until
  it goes on or ends. Encoding and packing run before `BEGIN`, so the lock is held for the
  commit's own statements and its fsync only.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import ClassVar, TypeVar

from eudaimon.core.errors import ConfigurationError, JournalError
from eudaimon.core.events import Event
from eudaimon.core.run_index import RunRow
from eudaimon.stores.base import Fence, Lease, RunSummary, Snapshot
from eudaimon.stores.index import DayRow, LastRows, RunQuery, day_rows, select
from eudaimon.stores.packing import pack
from eudaimon.stores.records import Record
from eudaimon.stores.sqlite import _index, _leases, _records, _sql, _worker
from eudaimon.stores.sqlite._worker import CommitWorker, Job, Synchronous

T = TypeVar("T")


class SqliteStore:
    """The journal in one SQLite file, safe for many tasks and many processes at once.

    Args:
        path: The database file, created (with its tables) at first use if missing; its
            directory must exist (a typo'd path fails instead of journaling somewhere
            unexpected). `":memory:"` gives a private, throwaway database.
        synchronous: `"full"` (default) makes every commit durable with an fsync; `"normal"`
            skips the fsync of WAL commits, so a power loss (not a process crash) may lose the
            last commits.
        busy_timeout_s: How long to wait for another process's write lock before failing.
        read_only: Open an existing journal for reading only (`mode=ro`): nothing is created,
            upgraded or written, so a read-only file, or one in a read-only directory, can be
            read, and a typo'd path is an error rather than a new empty journal. Writes raise
            `JournalError`.
    """

    _worker_type: ClassVar[type[CommitWorker]] = CommitWorker
    """The seam a test replaces to hold a commit on the worker's thread."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "full",
        busy_timeout_s: float = 30.0,
        read_only: bool = False,
    ) -> None:
        if synchronous not in ("full", "normal"):
            raise ConfigurationError(f"SqliteStore synchronous={synchronous!r}; use 'full' or 'normal'")
        self._path = os.fspath(path)
        self._read_only = read_only
        self._worker = _worker.attach(
            self._worker_type,
            self._path,
            synchronous=synchronous,
            busy_timeout_s=busy_timeout_s,
            read_only=read_only,
            name=repr(self),
        )
        self._tally = _worker.Tally()
        self._rows = LastRows()
        self._closed = False
        self._lease_writes = 0

    @property
    def path(self) -> str:
        return self._path

    @property
    def commit_count(self) -> int:
        """Durable COMMITs issued (schema creation aside); one may carry many writes. A transaction
        that wrote nothing (every append in it refused) is rolled back instead: no fsync, not
        counted; nor is one that only took or gave up leases (committed without an fsync)."""
        return self._tally.commits

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
        given, is kept in the same transaction; with a `fence`, only while its owner holds the
        lease unexpired (checked last, just before the commit).

        Raises:
            ConcurrencyConflict: another writer appended first; nothing was written.
            LeaseLost: the fence's lease lapsed or another owner holds it; nothing was written.
            CorruptEvent: the batch does not follow on from `expected_seq`.
            JournalError: the database failed, or the store is closed.
        """
        batch = tuple(events)
        if batch:
            # Encoded here, not in the transaction, so the cross-process write lock is held briefly.
            packed = pack(batch)

            row = self._rows.following(run_id, expected_seq, batch)
            search_changed = (True, True) if row is None else self._rows.search_changed(row)

            def write(conn: sqlite3.Connection) -> tuple[float | None, RunRow]:
                """This append's part of the transaction; the monotonic time it began at if its
                fence took the lease back (no later than the new expiry the store wrote)."""
                started, sent = time.time(), time.monotonic()  # under the write lock
                written = _sql.append(
                    conn, run_id, expected_seq, batch, packed, snapshot, row, search_changed=search_changed
                )
                retaken = fence is not None and _leases.check_fence(conn, fence, started)
                return (sent if retaken else None), written

            retaken_at, written = await self._do(True, write)
            self._rows.keep(written)
            if retaken_at is not None and fence is not None and fence.taken_back is not None:
                fence.taken_back(retaken_at)  # the commit landed
        else:
            await self._do(False, lambda conn: None)  # a no-op, but not on a closed store

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run.

        Raises:
            CorruptEvent, UnknownEventType: a row does not parse; it names the run and the seq.
        """
        return await self._do(False, lambda conn: _sql.load(conn, run_id, after_seq))

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first (ties: oldest run first, as `MemoryStore`)."""
        return await self._do(False, lambda conn: _sql.list_runs(conn, limit, thread_id))

    async def query_runs(self, query: RunQuery) -> list[RunRow]:
        """The run index's rows `query` asks for, most recently updated first (one indexed query;
        an older file opened read-only, which has no index, is folded run by run)."""

        def read(conn: sqlite3.Connection) -> list[RunRow]:
            if self._read_only and _index.missing(conn):
                return select(_index.folded(conn, _sql.load_all), query)
            return _index.query(conn, query)

        return await self._do(False, read)

    async def run_row(self, run_id: str) -> RunRow | None:
        def read(conn: sqlite3.Connection) -> RunRow | None:
            if self._read_only and _index.missing(conn):
                return RunRow.of(_sql.load_all(conn, run_id))
            found = conn.execute("SELECT body FROM run_index WHERE run_id = ?", (run_id,)).fetchone()
            return None if found is None else RunRow.from_json(found[0])

        return await self._do(False, read)

    async def dashboard(self, since: datetime, agent: str | None = None) -> list[DayRow]:
        """Per agent and UTC day of creation since `since`, from the index (GROUP BY, ranks)."""

        def read(conn: sqlite3.Connection) -> list[DayRow]:
            if self._read_only and _index.missing(conn):
                return day_rows(_index.folded(conn, _sql.load_all), since, agent)
            return _index.dashboard(conn, since, agent)

        return await self._do(False, read)

    async def delete_run(self, run_id: str) -> None:
        """Remove a run's events, summary and snapshot (retention); unknown runs are ignored."""
        self._rows.forget(run_id)
        await self._do(True, lambda conn: _sql.delete_run(conn, run_id))

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        """Take or renew the lease `name` for `owner` for `ttl_s` seconds.

        Raises:
            LeaseHeld: another owner holds it and it has not expired.
        """
        self._lease_writes += 1
        sweep = self._lease_writes % _leases.SWEEP_EVERY == 1
        return await self._write_lease(lambda conn: _leases.acquire(conn, name, owner, ttl_s, sweep=sweep))

    async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
        """Renew every (name, owner) still naming that owner, lapsed or not, in one transaction
        (a statement per `_leases.RENEW_CHUNK` leases): which were renewed. A lease no longer naming
        its owner was taken by another (or given up, or swept long after it lapsed)."""
        pairs = list(leases)
        if not pairs:
            return []
        return await self._write_lease(lambda conn: _leases.renew(conn, pairs, ttl_s))

    async def lease_holders(self, names: Sequence[str]) -> dict[str, Lease]:
        """The leases among `names` held unexpired now, each with the time it has left."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        return await self._do(False, lambda conn: _leases.holders(conn, wanted))

    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up, if `owner` holds it."""
        sql = "DELETE FROM leases WHERE name = ? AND owner = ?"
        await self._write_lease(lambda conn: conn.execute(sql, (name, owner)).close())

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` as the latest for its key unless a newer version is already kept."""
        row = (snapshot.key, snapshot.version, snapshot.data)
        await self._do(True, lambda conn: conn.execute(_sql.SAVE_SNAPSHOT, row).close())

    async def load_snapshot(self, key: str) -> Snapshot | None:
        sql = "SELECT key, version, data FROM snapshots WHERE key = ?"
        row = await self._do(False, lambda conn: conn.execute(sql, (key,)).fetchone())
        return None if row is None else Snapshot(*row)

    async def delete_snapshots(self) -> int:
        """Drop every snapshot; returns how many. Only speed changes."""
        return await self._do(True, lambda conn: conn.execute("DELETE FROM snapshots").rowcount)

    async def put_record(
        self, kind: str, key: str, body: str, *, only_new: bool = False, expected: str | None = None
    ) -> bool:
        return await self._do(True, lambda conn: _records.put(conn, kind, key, body, only_new, expected))

    async def load_records(self, kind: str, *, limit: int = 10_000) -> list[Record]:
        return await self._do(False, lambda conn: _records.load_all(conn, kind, limit))

    async def load_record(self, kind: str, key: str) -> Record | None:
        return await self._do(False, lambda conn: _records.load_one(conn, kind, key))

    async def delete_record(self, kind: str, key: str) -> bool:
        return await self._do(True, lambda conn: _records.delete(conn, kind, key))

    async def close(self) -> None:
        """Finish this store's jobs already queued; the last store of the process on the file
        also stops the worker and closes its connection."""
        if self._closed:
            return
        self._closed = True
        stopping = self._worker.detach()
        if stopping is not None:
            await asyncio.wrap_future(stopping)

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r}{', read_only=True' if self._read_only else ''})"

    async def _write_lease(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """A lease's write: no fsync of its own (it shares one if its group has a durable write)."""
        return await self._do(True, run, durable=False)

    async def _do(self, writes: bool, run: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> T:
        job = Job(run, writes, durable, self._tally)
        if writes and self._read_only:
            raise JournalError(
                f"the SQLite journal {self._path!r} was opened read-only; open it without read_only to write"
            )
        if self._closed:
            raise JournalError(f"{self!r} is closed; open a new store to use this journal")
        return await self._worker.submit(job)
