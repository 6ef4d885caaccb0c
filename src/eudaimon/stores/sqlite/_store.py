"""`SqliteStore`: the embedded default journal — one file, WAL, group commit.

Why it is built this way:

- A SQLite connection's calls block. So the store owns ONE worker thread holding ONE
  connection (lent to the caller's thread only as below); the async methods put a job on a queue and
  await a `concurrent.futures.Future` wrapped for whichever event loop is running. Nothing binds
  to a loop, so one store serves `asyncio.run(...)` after `asyncio.run(...)`.
- With `synchronous=FULL` a commit is an fsync: it is what a write costs. The worker takes every
  write waiting in the queue and commits them in one `BEGIN IMMEDIATE … COMMIT`, so writes that
  queue up while a commit is in progress share the next one (group commit). A write that shares
  the transaction runs in its own SAVEPOINT: an append that conflicts fails alone, the others
  still commit.
- A run appending alone (the worker idle, no other run's append in between) commits on the
  caller's thread instead, and so does a lease: the two thread switches of a round trip cost
  about what the fsync does. The event loop then waits for that commit, never for another
  process's lock, and never for a checkpoint: the worker runs those, every `_CHECKPOINT_EVERY`
  commits, on a connection of its own, while writes go on.
- The expected-seq check reads the run's last seq (one seek in the `events` key) after
  `BEGIN IMMEDIATE`, which holds SQLite's write lock across processes, so two processes cannot
  both win a seq; the PRIMARY KEY (run_id, seq) of `events` is the hard fence behind that check.
  An append writes nothing else (`_schema`): a run's summary is read from its last event.
- A durable commit's sync costs more when its frames lengthen the WAL, so the store keeps
  synced zeros ahead of them (`_wal_room`).
- A lease matters only to live processes on this machine, which all read the same page cache,
  so a transaction that only takes or gives up leases commits without an fsync.
- Leases expire by the wall clock (`time.time()`), the clock every process on the machine shares.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, CorruptEvent, JournalError, LeaseHeld
from eudaimon.core.events import TERMINAL_TYPES, Event
from eudaimon.stores.base import Lease, RunSummary, Snapshot, check_batch, summary_fields
from eudaimon.stores.packing import PackedBatch, pack
from eudaimon.stores.sqlite import _content, _schema, _wal_room

T = TypeVar("T")
Synchronous = Literal["full", "normal"]

_LEASE_GRACE_S = 60.0
"""How long after expiring a lease row is kept (it only says who held it last)."""
_CHECKPOINT_EVERY = 200
"""Commits between checkpoints, which the worker runs on a connection of its own (SQLite's own
would run inside whichever commit crosses its threshold, possibly one made on the event loop's
thread; one on the writers' connection would hold up their next commit for milliseconds)."""
_MAX_GROUP = 512
"""Most jobs taken from the queue at once: bounds how long one transaction holds the lock."""


@dataclass(eq=False)
class _Job(Generic[T]):
    """Work for the worker thread; a write runs inside the group's transaction (in a savepoint
    when it shares the transaction with others, so that it fails alone)."""

    run: Callable[[sqlite3.Connection], T]
    writes: bool
    durable: bool = True
    """False for a lease: it matters only to live processes on this machine, which all see the
    page cache a commit writes to, and a crash of the machine that could lose it ends every holder."""
    done: Future[T] = field(default_factory=Future)


@dataclass(eq=False)
class _Stop:
    done: Future[None] = field(default_factory=Future)


class _Checkpoint:
    """Asks the worker for a checkpoint: a commit found one due."""


_CHECKPOINT = _Checkpoint()
_Outcome = tuple[Future[Any], bool, Any]
"""A job's future, whether it succeeded, and its result or error: set once the connection is
free again, so that a caller woken by it finds the connection free for its next write."""


class SqliteStore:
    """The journal in one SQLite file, safe for many tasks and many processes at once.

    Args:
        path: The database file; its parent directories are created. `":memory:"` gives a
            private, throwaway database.
        synchronous: `"full"` (default) makes every commit durable with an fsync; `"normal"`
            skips the fsync of WAL commits, so a power loss (not a process crash) may lose the
            last commits.
        busy_timeout_s: How long to wait for another process's write lock before failing.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: Synchronous = "full", busy_timeout_s: float = 30.0
    ) -> None:
        if synchronous not in ("full", "normal"):
            raise ConfigurationError(f"SqliteStore synchronous={synchronous!r}; use 'full' or 'normal'")
        self._path = os.fspath(path)
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        self._synchronous: Synchronous = synchronous
        self._busy_timeout_s = busy_timeout_s
        self._jobs: queue.SimpleQueue[_Job[Any] | _Stop | _Checkpoint] = queue.SimpleQueue()
        self._lock = threading.Lock()  # orders "closed?" checks against enqueues and the stop
        self._thread: threading.Thread | None = None
        self._closed = False
        self._commits = 0
        self._synchronous_now: Synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        """The worker's connection, once open; used on the caller's thread only under `_using`."""
        self._using = threading.Lock()
        self._last_run: str | None = None
        roomy = synchronous == "full" and self._path != ":memory:" and _wal_room.supported()
        self._room = _wal_room.WalRoom(self._path) if roomy else None
        """The room durable commits keep ahead of the WAL: only fsynced commits gain from it, and
        a private in-memory database has no WAL file."""
        self._since_checkpoint = 0
        self._checkpointer: sqlite3.Connection | None = None
        """The worker's second connection, for checkpoints alone; opened at the first one."""

    @property
    def path(self) -> str:
        return self._path

    @property
    def commit_count(self) -> int:
        """Durable COMMITs issued (schema creation aside); one may carry many writes. A transaction
        that wrote nothing (every append in it refused) is rolled back instead: no fsync, not
        counted; nor is one that only took or gave up leases (committed without an fsync)."""
        return self._commits

    async def append(
        self, run_id: str, expected_seq: int, events: Sequence[Event], snapshot: Snapshot | None = None
    ) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`; `snapshot`, if
        given, is kept in the same transaction.

        Raises:
            ConcurrencyConflict: another writer appended first; nothing was written.
            CorruptEvent: the batch does not follow on from `expected_seq`.
            JournalError: the database failed, or the store is closed.
        """
        batch = tuple(events)
        if batch:
            # Encoded here, not in the transaction, so the cross-process write lock is held briefly.
            packed = pack(batch)

            def write(conn: sqlite3.Connection) -> None:
                _append(conn, run_id, expected_seq, batch, packed, snapshot)

            alone, self._last_run = self._last_run in (None, run_id), run_id
            done = self._write_here(write, durable=True) if alone else None
            if done is None:
                await self._do(True, write)
            else:
                done.result()  # raises what the write raised
        else:
            await self._do(False, lambda conn: None)  # a no-op, but not on a closed store

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run.

        Raises:
            CorruptEvent, UnknownEventType: a row does not parse; it names the run and the seq.
        """
        return await self._do(False, lambda conn: _load(conn, run_id, after_seq))

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first (ties: oldest run first, as `MemoryStore`)."""
        return await self._do(False, lambda conn: _list_runs(conn, limit, thread_id))

    async def delete_run(self, run_id: str) -> None:
        """Remove a run's events, summary and snapshot (retention); unknown runs are ignored."""
        await self._do(True, lambda conn: _delete_run(conn, run_id))

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        """Take or renew the lease `name` for `owner` for `ttl_s` seconds.

        Raises:
            LeaseHeld: another owner holds it and it has not expired.
        """
        return await self._write_lease(lambda conn: _acquire_lease(conn, name, owner, ttl_s))

    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up, if `owner` holds it."""
        sql = "DELETE FROM leases WHERE name = ? AND owner = ?"
        await self._write_lease(lambda conn: conn.execute(sql, (name, owner)).close())

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` as the latest for its key unless a newer version is already kept."""
        row = (snapshot.key, snapshot.version, snapshot.data)
        await self._do(True, lambda conn: conn.execute(_SAVE_SNAPSHOT, row).close())

    async def load_snapshot(self, key: str) -> Snapshot | None:
        sql = "SELECT key, version, data FROM snapshots WHERE key = ?"
        row = await self._do(False, lambda conn: conn.execute(sql, (key,)).fetchone())
        return None if row is None else Snapshot(*row)

    async def delete_snapshots(self) -> int:
        """Drop every snapshot; returns how many. Only speed changes."""
        return await self._do(True, lambda conn: conn.execute("DELETE FROM snapshots").rowcount)

    async def close(self) -> None:
        """Finish the jobs already queued, then stop the worker and close the connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._thread is None:
                return
            stop = _Stop()
            self._jobs.put(stop)
        await asyncio.wrap_future(stop.done)

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r})"

    async def _write_lease(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """A lease's write, on the caller's thread when the worker is idle (it takes no fsync)."""
        done = self._write_here(run, durable=False)
        return done.result() if done is not None else await self._do(True, run, durable=False)

    async def _do(self, writes: bool, run: Callable[[sqlite3.Connection], T], *, durable: bool = True) -> T:
        job = _Job(run, writes, durable)
        with self._lock:
            if self._closed:
                raise JournalError(f"{self!r} is closed; open a new store to use this journal")
            if self._thread is None:
                # Started on first use, so a store built and never used costs no thread.
                self._thread = threading.Thread(target=self._serve, name=f"eudaimon-{self!r}", daemon=True)
                self._thread.start()
            self._jobs.put(job)
        return await asyncio.wrap_future(job.done)

    # -- the worker thread: the only code that touches the connection ---------------------

    def _serve(self) -> None:
        try:
            conn: sqlite3.Connection | BaseException = self._connect()
        except (sqlite3.Error, OSError, JournalError) as exc:
            conn = exc  # the file cannot be used: every job is told why, until close()
        if isinstance(conn, sqlite3.Connection):
            self._conn = conn
        while True:
            group = self._take_group()
            jobs = [job for job in group if isinstance(job, _Job)]
            stop = next((s for s in group if isinstance(s, _Stop)), None)
            if jobs or stop is not None:
                _settle(self._run_jobs(conn, jobs, stopping=stop is not None))
            if stop is not None:
                try:
                    for connection in (self._checkpointer, conn):
                        if isinstance(connection, sqlite3.Connection):
                            connection.close()
                    if self._room is not None:
                        self._room.close()
                finally:
                    if stop.done.set_running_or_notify_cancel():  # close() may have been cancelled
                        stop.done.set_result(None)
                return
            if _CHECKPOINT in group and isinstance(conn, sqlite3.Connection):
                self._checkpoint()

    def _run_jobs(
        self, conn: sqlite3.Connection | BaseException, jobs: list[_Job[Any]], *, stopping: bool
    ) -> list[_Outcome]:
        """The group's writes (in one transaction), then its reads; their outcomes, to be set
        once the connection is free again."""
        with self._using:
            try:
                if isinstance(conn, BaseException):
                    return [(job.done, False, _failed(self._path, conn)) for job in jobs]
                with self._patient(conn):
                    outcomes = self._write_group(conn, [job for job in jobs if job.writes])
                    return outcomes + [_read(job, self._path, conn) for job in jobs if not job.writes]
            except BaseException as exc:  # a bug here must never leave a caller awaiting forever
                return [(job.done, False, _failed(self._path, exc)) for job in jobs]
            finally:
                if stopping:
                    self._conn = None

    def _checkpoint(self) -> None:
        """Copy the WAL's frames into the database, on a connection of our own, so that writes
        on the main one (the event loop's among them) go on meanwhile; SQLite then starts the
        WAL again from the top at the next write. Only the WAL's length depends on it, so a
        failure is left for the next checkpoint."""
        try:
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
                self._checkpointer.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            pass

    def _take_group(self) -> list[_Job[Any] | _Stop | _Checkpoint]:
        """Block for one job, then take every job already waiting (up to `_MAX_GROUP`)."""
        group = [self._jobs.get()]
        while len(group) < _MAX_GROUP and not isinstance(group[-1], _Stop):
            try:
                group.append(self._jobs.get_nowait())
            except queue.Empty:
                break
        # A caller cancelled before we began: drop its job. After this, we decide its outcome.
        return [job for job in group if not isinstance(job, _Job) or job.done.set_running_or_notify_cancel()]

    def _enter_wal_mode(self, conn: sqlite3.Connection) -> None:
        """Switching a new file to WAL needs it to itself, and SQLite answers "locked" at once,
        without waiting, when another process opens the file at that moment: retry meanwhile."""
        deadline = time.monotonic() + self._busy_timeout_s
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            self._enter_wal_mode(conn)
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # the worker checkpoints
            conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
            _schema.ensure(conn)
            conn.execute("PRAGMA busy_timeout = 0")  # at rest: see `_patient`
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_synchronous(self, conn: sqlite3.Connection, synchronous: Synchronous) -> None:
        """Switch between fsync'ed and unsynced commits (only outside a transaction)."""
        if synchronous != self._synchronous_now:
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            self._synchronous_now = synchronous

    def _write_here(self, write: Callable[[sqlite3.Connection], T], *, durable: bool) -> Future[T] | None:
        """Commit `write` on the caller's thread if the worker is idle and no other process
        holds the write lock, and return its settled outcome; None if it must go through the
        worker instead.

        A run appending alone gains most: the two thread switches of a round trip through the
        worker cost about as much as the commit's fsync. The event loop waits for the commit,
        as for any work of that length; it never waits for another process's lock (that write
        goes to the worker), nor for a checkpoint (the worker runs them on its own connection)."""
        conn = self._conn
        if conn is None or not self._jobs.empty():
            return None
        if not self._using.acquire(blocking=False):
            return None
        try:
            if self._conn is None or not self._jobs.empty() or not self._begin_now(conn, durable):
                return None
            job: _Job[T] = _Job(write, True, durable)
            job.done.set_running_or_notify_cancel()
            try:
                _settle(self._write_group(conn, [job], begun=True))
            finally:
                if conn.in_transaction:  # only a bug gets here: leave no transaction open
                    conn.execute("ROLLBACK")
        finally:
            self._using.release()
        return job.done

    def _begin_now(self, conn: sqlite3.Connection, durable: bool) -> bool:
        """`BEGIN IMMEDIATE` without waiting (the connection is at rest, so impatient): False
        if another process holds the lock."""
        self._set_synchronous(conn, self._synchronous if durable else "normal")
        try:
            conn.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError:
            return False

    @contextmanager
    def _patient(self, conn: sqlite3.Connection) -> Iterator[None]:
        """Wait up to `busy_timeout_s` for other processes' locks while the worker runs a group.

        At rest the connection waits for nothing, so a write on the caller's thread (most
        writes, for a run appending alone) begins without setting it: each PRAGMA costs about
        as much as the UPDATE an append makes."""
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
        try:
            yield
        finally:
            conn.execute("PRAGMA busy_timeout = 0")

    def _write_group(self, conn: sqlite3.Connection, jobs: list[_Job[Any]], *, begun: bool = False) -> list[_Outcome]:
        """Run every write of the group in one transaction; each succeeds or fails alone."""
        if not jobs:
            return []
        outcomes: list[tuple[bool, Any]] = []
        wrote = False
        durable = any(job.durable for job in jobs)
        try:
            if not begun:
                self._set_synchronous(conn, self._synchronous if durable else "normal")
                conn.execute("BEGIN IMMEDIATE")
            try:
                if len(jobs) == 1:  # alone in its transaction: the ROLLBACK below undoes it if it fails
                    changes = conn.total_changes
                    try:
                        outcomes.append((True, jobs[0].run(conn)))
                        wrote = conn.total_changes > changes
                    except Exception as exc:
                        outcomes.append((False, _as_raised(self._path, exc)))
                else:
                    for job in jobs:
                        changes = conn.total_changes
                        conn.execute("SAVEPOINT job")
                        try:
                            result = job.run(conn)
                        except Exception as exc:
                            conn.execute("ROLLBACK TO job")  # if this fails too, the whole group fails
                            outcomes.append((False, _as_raised(self._path, exc)))
                        else:
                            wrote = wrote or conn.total_changes > changes
                            outcomes.append((True, result))
                        conn.execute("RELEASE job")
                if wrote and durable and self._room is not None:
                    self._room.make()
                conn.execute("COMMIT" if wrote else "ROLLBACK")  # nothing written: spare the fsync
                self._commits += wrote and durable
                self._since_checkpoint += wrote
                if self._since_checkpoint >= _CHECKPOINT_EVERY:
                    self._since_checkpoint = 0
                    self._jobs.put(_CHECKPOINT)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            return [(job.done, False, _failed(self._path, exc)) for job in jobs]
        return [(job.done, ok, value) for job, (ok, value) in zip(jobs, outcomes, strict=True)]


_SAVE_SNAPSHOT = (
    "INSERT INTO snapshots (key, version, data) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE"
    " SET version = excluded.version, data = excluded.data WHERE excluded.version >= snapshots.version"
)


def _append(
    conn: sqlite3.Connection,
    run_id: str,
    expected: int,
    events: Sequence[Event],
    packed: PackedBatch,
    snapshot: Snapshot | None,
) -> None:
    """One compare-and-append; raising undoes it (its savepoint, or its transaction)."""
    last = conn.execute("SELECT MAX(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    actual = 0 if last is None else int(last) + 1
    if expected != actual:
        raise ConcurrencyConflict(run_id, expected, actual)
    check_batch(run_id, expected, events)
    if expected == 0:
        # OR REPLACE: a summary left without events (a hand edit) must not block the run's id.
        agent, thread_id = summary_fields(events)
        conn.execute(
            "INSERT OR REPLACE INTO runs (run_id, agent, thread_id, created_at) VALUES (?, ?, ?, ?)",
            (run_id, agent, thread_id, _sortable(events[0].at)),
        )
    payloads = _content.store(conn, run_id, packed)
    rows = [(e.run_id, e.seq, e.at.isoformat(), e.type, p) for e, p in zip(events, payloads, strict=True)]
    conn.executemany("INSERT INTO events (run_id, seq, at, type, payload) VALUES (?, ?, ?, ?, ?)", rows)
    final = events[-1]
    if final.type in TERMINAL_TYPES:  # once per run: what lets `list_runs` read the newest ended runs alone
        conn.execute("UPDATE runs SET ended_at = ? WHERE run_id = ?", (_sortable(final.at), run_id))
    if snapshot is not None:
        conn.execute(_SAVE_SNAPSHOT, (snapshot.key, snapshot.version, snapshot.data))


def _load(conn: sqlite3.Connection, run_id: str, after_seq: int) -> list[Event]:
    rows = conn.execute(
        "SELECT seq, at, type, payload FROM events WHERE run_id = ? AND seq > ? ORDER BY seq", (run_id, after_seq)
    ).fetchall()
    try:
        return _content.load(conn, run_id, rows, after_seq)
    except (TypeError, ValueError) as exc:  # a NULL or a non-text column written by hand
        raise CorruptEvent(run_id, after_seq + 1, str(exc)) from exc


_SELECT_SUMMARIES = (
    "SELECT r.rowid, r.run_id, r.agent, r.thread_id, r.created_at, e.at, e.seq, e.type FROM runs AS r"
    " JOIN events AS e ON e.run_id = r.run_id AND e.seq = (SELECT MAX(seq) FROM events WHERE run_id = r.run_id)"
)
"""Each run's summary: its row in `runs` and its last event (one seek in the events key)."""


def _list_runs(conn: sqlite3.Connection, limit: int, thread_id: str | None) -> list[RunSummary]:
    """Most recently updated first; among runs updated at once, the one made first first.

    No index orders runs by their last update (keeping one would cost every append a page), but
    an ended run's last update is its end (`runs_by_end`): only the runs still going (few: live,
    paused or abandoned) and the newest `limit` ended runs are read. A thread's runs are read
    whole (`runs_by_thread`)."""
    if thread_id is not None:
        rows = conn.execute(f"{_SELECT_SUMMARIES} WHERE r.thread_id = ?", (thread_id,)).fetchall()
    else:
        rows = conn.execute(f"{_SELECT_SUMMARIES} WHERE r.ended_at IS NULL").fetchall()
        rows += conn.execute(
            f"{_SELECT_SUMMARIES} WHERE r.ended_at IS NOT NULL ORDER BY r.ended_at DESC, r.rowid LIMIT ?", (limit,)
        ).fetchall()
        rows.sort(key=lambda row: int(row[0]))
    summaries = [
        RunSummary(run, agent, thread, datetime.fromisoformat(created), datetime.fromisoformat(at), seq + 1, tag)
        for _, run, agent, thread, created, at, seq, tag in rows
    ]
    summaries.sort(key=lambda summary: _sortable(summary.updated_at), reverse=True)  # stable: ties keep rowid order
    return summaries[:limit]


def _delete_run(conn: sqlite3.Connection, run_id: str) -> None:
    _content.release(conn, run_id)
    conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM snapshots WHERE key = ?", (f"run:{run_id}",))


def _acquire_lease(conn: sqlite3.Connection, name: str, owner: str, ttl_s: float) -> Lease:
    now = time.time()  # read under the write lock: no other process can grant meanwhile
    held = conn.execute("SELECT owner, expires_at FROM leases WHERE name = ?", (name,)).fetchone()
    if held is not None and held[0] != owner and held[1] > now:
        raise LeaseHeld(name, held[0], held[1] - now)
    # A finished run's lease is left to expire rather than released (that would cost a commit),
    # so expired ones are swept here, in a transaction that writes anyway.
    conn.execute("DELETE FROM leases WHERE expires_at < ?", (now - _LEASE_GRACE_S,))
    conn.execute("INSERT OR REPLACE INTO leases (name, owner, expires_at) VALUES (?, ?, ?)", (name, owner, now + ttl_s))
    return Lease(name, owner, ttl_s)


def _read(job: _Job[Any], path: str, conn: sqlite3.Connection) -> _Outcome:
    try:
        return job.done, True, job.run(conn)
    except Exception as exc:
        return job.done, False, _as_raised(path, exc)


def _settle(outcomes: list[_Outcome]) -> None:
    for done, ok, value in outcomes:
        if ok:
            done.set_result(value)
        else:
            done.set_exception(value)


def _sortable(at: datetime) -> str:
    """A time whose text sorts in time order: aware times in UTC, always with microseconds."""
    return (at.astimezone(UTC) if at.tzinfo is not None else at).isoformat(timespec="microseconds")


def _failed(path: str, exc: BaseException) -> JournalError:
    """A fresh JournalError naming the file, one per caller, so none shares another's traceback."""
    error = JournalError(f"the SQLite journal {path!r} failed: {exc}")
    error.__cause__ = exc
    return error


def _as_raised(path: str, exc: Exception) -> Exception:
    """Our own errors (conflicts, corrupt rows, leases) pass through; SQLite's are wrapped."""
    return _failed(path, exc) if isinstance(exc, sqlite3.Error) else exc
