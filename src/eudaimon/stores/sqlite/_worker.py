"""The SQLite journal's commit worker: one thread and one connection per file, group commit.

Why it is built this way:

- A SQLite connection's calls block, and with `synchronous=FULL` a commit is an fsync (on a
  slow disk, milliseconds). So the worker owns ONE thread holding ONE connection, the only code
  that touches it: a caller (on an event loop) puts a job on a queue and awaits a
  future of the caller's own loop. No commit, fsync, lock wait or read ever runs on a loop's
  thread, so a loop shared with a server or with other runs keeps its timers whatever the disk
  costs. Nothing binds to a loop, so one store serves `asyncio.run(...)` after `asyncio.run(...)`.
- A group's outcomes reach each loop in one call (`call_soon_threadsafe`, one wake-up of the
  loop): a `concurrent.futures.Future` wrapped per job cost a lock, a callback chain and a
  wake-up each, about a sixth of a step's CPU with 1,000 runs in flight.
- Group commit, shared by every run of the process on the file: every `SqliteStore` of a
  process on one file (with the same settings) shares one worker (`attach`). It takes every
  job waiting in the queue and commits their writes in one `BEGIN IMMEDIATE … COMMIT`, so writes that queue up
  while a commit is in progress share the next one. An append that conflicts, is malformed or
  whose fence is refused fails alone (its caller gets its error), the others still commit: once
  one fails, the group runs again with each write in a SAVEPOINT of its own (`_run_writes`).
- Checkpoints run on the worker too, every `_CHECKPOINT_EVERY` commits, on a connection of
  their own (SQLite's own would run inside whichever commit crosses its threshold).
- A durable commit's sync costs more when its frames lengthen the WAL, so the worker keeps
  synced zeros ahead of them (`_wal_room`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from eudaimon.core.errors import JournalError
from eudaimon.stores.sqlite import _files, _schema, _wal_room

T = TypeVar("T")
Synchronous = Literal["full", "normal"]

_CHECKPOINT_EVERY = 200
"""Commits between checkpoints, which the worker runs on a connection of its own (SQLite's own
would run inside whichever commit crosses its threshold; one on the writers' connection would
hold up their next commit for milliseconds)."""
_MAX_GROUP = 512
"""Most jobs taken from the queue at once: bounds how long one transaction holds the lock."""


@dataclass(eq=False)
class Job(Generic[T]):
    """Work for the worker thread; a write runs inside the group's transaction, and may run
    twice in it (`_run_writes`): it must touch nothing but the connection."""

    run: Callable[[sqlite3.Connection], T]
    writes: bool
    durable: bool = True
    """False for a lease: it matters only to live processes on this machine, which all see the
    page cache a commit writes to, and a crash of the machine that could lose it ends every holder."""
    tally: Tally | None = None
    """The store the job is for, whose `commit_count` a durable COMMIT that this job wrote in adds
    one to (stores on one file share a worker, each counts its own)."""
    done: asyncio.Future[T] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Settled on its loop's thread (`_settle`); made on the submitting loop."""


@dataclass(eq=False)
class Tally:
    """One store's durable COMMITs (see `SqliteStore.commit_count`)."""

    commits: int = 0


@dataclass(eq=False)
class _Stop:
    done: Future[None] = field(default_factory=Future)


class _Checkpoint:
    """Asks the worker for a checkpoint: a commit found one due."""


_CHECKPOINT = _Checkpoint()
_Outcome = tuple[asyncio.Future[Any], bool, Any]
"""A job's future, whether it succeeded, and its result or error: set once the whole group is
done, so that no caller is woken while its group's transaction is still open."""


_Key = tuple[int, str, Synchronous, float, bool, type["CommitWorker"]]
_attached: dict[_Key, CommitWorker] = {}
"""The workers of this process, by file (and the settings a connection is opened with)."""
_attached_lock = threading.Lock()


def attach(
    kind: type[CommitWorker], path: str, *, synchronous: Synchronous, busy_timeout_s: float, read_only: bool, name: str
) -> CommitWorker:
    """The worker every store of this process on `path` (with these settings) shares, so that
    all their runs share its group commit, and none waits in SQLite's busy handler (which
    sleeps for milliseconds at a time) for another's lock; a private one for `":memory:"`.
    Keyed by process too: a forked child has none of its parent's threads."""
    if path == ":memory:":
        return kind(path, synchronous=synchronous, busy_timeout_s=busy_timeout_s, read_only=read_only, name=name)
    key: _Key = (os.getpid(), os.path.realpath(path), synchronous, busy_timeout_s, read_only, kind)
    with _attached_lock:
        worker = _attached.get(key)
        if worker is None:
            worker = kind(path, synchronous=synchronous, busy_timeout_s=busy_timeout_s, read_only=read_only, name=name)
            worker._key = key
            _attached[key] = worker
        else:
            worker._users += 1
    return worker


class CommitWorker:
    """The thread and connection behind the `SqliteStore`s of a process on one file: the only
    code that touches them."""

    def __init__(
        self, path: str, *, synchronous: Synchronous, busy_timeout_s: float, read_only: bool, name: str
    ) -> None:
        self._path = path
        self._name = name
        self._read_only = read_only
        self._synchronous: Synchronous = synchronous
        self._busy_timeout_s = busy_timeout_s
        self._jobs: queue.SimpleQueue[Job[Any] | _Stop | _Checkpoint] = queue.SimpleQueue()
        self._lock = threading.Lock()  # orders "closed?" checks against enqueues and the stop
        self._thread: threading.Thread | None = None
        self._closed = False
        self._key: _Key | None = None
        """Where `attach` keeps this worker for the process's other stores on the file."""
        self._users = 1
        """The stores using this worker (`attach`, `detach`)."""
        self._synchronous_now: Synchronous = synchronous
        roomy = synchronous == "full" and path != ":memory:" and not read_only and _wal_room.supported()
        self._room = _wal_room.WalRoom(path) if roomy else None
        """The room durable commits keep ahead of the WAL: only fsynced commits gain from it, and
        a private in-memory database has no WAL file."""
        self._since_checkpoint = 0
        self._checkpointer: sqlite3.Connection | None = None
        """The worker's second connection, for checkpoints alone; opened at the first one."""

    def submit(self, job: Job[T]) -> asyncio.Future[T]:
        """Queue `job` for the worker thread (started on first use, so a store built and never
        used costs no thread).

        Raises:
            JournalError: the worker was closed.
        """
        with self._lock:
            if self._closed:
                raise JournalError(f"{self._name} is closed; open a new store to use this journal")
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=f"eudaimon-{self._name}", daemon=True)
                self._thread.start()
            self._jobs.put(job)
        return job.done

    def detach(self) -> asyncio.Future[Any] | Future[None] | None:
        """One store is done with the worker: once the last is, `close` it. Either way the future
        settles once the jobs queued so far are done; None if there is nothing to wait for."""
        with _attached_lock:  # held while queuing the barrier, so that no last detach closes us first
            self._users -= 1
            if self._users > 0:
                with self._lock:
                    started = self._thread is not None
                return self.submit(Job(lambda conn: None, writes=False)) if started else None  # after what is queued
            if self._key is not None:
                del _attached[self._key]
        return self.close()

    def close(self) -> Future[None] | None:
        """Finish the jobs already queued, then stop: the future settles once the connection is
        closed; None if there is nothing to wait for."""
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            if self._thread is None:
                return None
            stop = _Stop()
            self._jobs.put(stop)
        return stop.done

    def _serve(self) -> None:
        try:
            conn: sqlite3.Connection | BaseException = self._connect()
        except (sqlite3.Error, OSError, JournalError) as exc:
            conn = exc  # the file cannot be used: every job is told why, until close()
        while True:
            group = self._take_group()
            jobs = [job for job in group if isinstance(job, Job)]
            stop = next((s for s in group if isinstance(s, _Stop)), None)
            if jobs or stop is not None:
                _settle(self._run_jobs(conn, jobs))
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

    def _run_jobs(self, conn: sqlite3.Connection | BaseException, jobs: list[Job[Any]]) -> list[_Outcome]:
        """The group's writes (in one transaction), then its reads; their outcomes."""
        try:
            if isinstance(conn, BaseException):
                return [(job.done, False, _failed(self._path, conn)) for job in jobs]
            outcomes = self._write_group(conn, [job for job in jobs if job.writes])
            return outcomes + [_read(job, self._path, conn) for job in jobs if not job.writes]
        except BaseException as exc:  # a bug here must never leave a caller awaiting forever
            return [(job.done, False, _failed(self._path, exc)) for job in jobs]

    def _checkpoint(self) -> None:
        """Copy the WAL's frames into the database, on a connection of our own, so that writes
        on the main one go on meanwhile; SQLite then starts the
        WAL again from the top at the next write. Only the WAL's length depends on it, so a
        failure is left for the next checkpoint."""
        try:
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
                self._checkpointer.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            pass

    def _take_group(self) -> list[Job[Any] | _Stop | _Checkpoint]:
        """Block for one job, then take every job already waiting (up to `_MAX_GROUP`)."""
        group = [self._jobs.get()]
        while len(group) < _MAX_GROUP and not isinstance(group[-1], _Stop):
            try:
                group.append(self._jobs.get_nowait())
            except queue.Empty:
                break
        # A caller cancelled before we began: drop its job. One that cancels later gets no
        # outcome (`_settle`) but its write may land, as with any write cut off mid-commit.
        return [job for job in group if not isinstance(job, Job) or not job.done.cancelled()]

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
        if self._path != ":memory:":
            _files.check_path(self._path, read_only=self._read_only)
        if self._read_only:
            return _files.connect_read_only(self._path)
        conn = sqlite3.connect(self._path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            self._enter_wal_mode(conn)
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # the worker checkpoints
            conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
            _schema.ensure(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_synchronous(self, conn: sqlite3.Connection, synchronous: Synchronous) -> None:
        """Switch between fsync'ed and unsynced commits (only outside a transaction)."""
        if synchronous != self._synchronous_now:
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            self._synchronous_now = synchronous

    def _commit(self, conn: sqlite3.Connection) -> None:
        """COMMIT the group's transaction: with `synchronous=full`, its fsync. On this thread
        only, never on an event loop's; a test holds it here to watch the loop go on."""
        conn.execute("COMMIT")

    def _write_group(self, conn: sqlite3.Connection, jobs: list[Job[Any]]) -> list[_Outcome]:
        """Run every write of the group in one transaction; each succeeds or fails alone."""
        if not jobs:
            return []
        durable = any(job.durable for job in jobs)
        try:
            self._set_synchronous(conn, self._synchronous if durable else "normal")
            conn.execute("BEGIN IMMEDIATE")
            try:
                ran = self._run_writes(conn, jobs, isolated=False)
                if ran is None:  # one failed among others: undo them all, then fail it alone
                    conn.execute("ROLLBACK")
                    conn.execute("BEGIN IMMEDIATE")
                    ran = self._run_writes(conn, jobs, isolated=True)
                assert ran is not None
                outcomes, writers = ran
                if writers and durable and self._room is not None:
                    self._room.make()
                if writers:
                    self._commit(conn)
                else:
                    conn.execute("ROLLBACK")  # nothing written: spare the fsync
                for tally in writers if durable else ():
                    if tally is not None:
                        tally.commits += 1
                self._since_checkpoint += bool(writers)
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

    def _run_writes(
        self, conn: sqlite3.Connection, jobs: list[Job[Any]], *, isolated: bool
    ) -> tuple[list[tuple[bool, Any]], set[Tally | None]] | None:
        """Each job's outcome, and the tallies of the jobs that wrote (None for a job without
        one); None when a job failed outside a savepoint while sharing the transaction.

        A savepoint per job is two statements more, and each statement gives the GIL up and
        waits to get it back from a busy event loop (`_sql`): jobs fail rarely (a conflict, a
        lapsed lease), so the group first runs without them and runs again with them only then.
        A job alone in the transaction needs none: the ROLLBACK of a group that wrote nothing
        undoes it."""
        outcomes: list[tuple[bool, Any]] = []
        writers: set[Tally | None] = set()
        for job in jobs:
            changes = conn.total_changes
            if isolated:
                conn.execute("SAVEPOINT job")
            try:
                result = job.run(conn)
            except Exception as exc:
                if not isolated and len(jobs) > 1:
                    return None
                if isolated:
                    conn.execute("ROLLBACK TO job")  # if this fails too, the whole group fails
                outcomes.append((False, _as_raised(self._path, exc)))
            else:
                if conn.total_changes > changes:
                    writers.add(job.tally)
                outcomes.append((True, result))
            if isolated:
                conn.execute("RELEASE job")
        return outcomes, writers


def _read(job: Job[Any], path: str, conn: sqlite3.Connection) -> _Outcome:
    try:
        return job.done, True, job.run(conn)
    except Exception as exc:
        return job.done, False, _as_raised(path, exc)


def _settle(outcomes: list[_Outcome]) -> None:
    """Hand each loop its jobs' outcomes in one call; a loop already closed has no one waiting."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for outcome in outcomes:
        by_loop.setdefault(outcome[0].get_loop(), []).append(outcome)
    for loop, theirs in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits
            loop.call_soon_threadsafe(_set_all, theirs)


def _set_all(outcomes: list[_Outcome]) -> None:
    """On the loop's thread: set every outcome whose caller still waits."""
    for done, ok, value in outcomes:
        if done.done():  # cancelled meanwhile
            continue
        if ok:
            done.set_result(value)
        else:
            done.set_exception(value)


def _failed(path: str, exc: BaseException) -> JournalError:
    """A fresh JournalError naming the file, one per caller, so none shares another's traceback."""
    if type(exc) is JournalError:  # already says what is wrong with the file, and names it
        return JournalError(str(exc))
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        error = JournalError(
            f"the SQLite journal {path!r} stayed locked by another process ({exc}); a process stopped or "
            f"paused inside a commit holds the lock until it continues or ends: find it (fuser {path}), "
            "then let it continue or end it"
        )
    else:
        error = JournalError(f"the SQLite journal {path!r} failed: {exc}")
    error.__cause__ = exc
    return error


def _as_raised(path: str, exc: Exception) -> Exception:
    """Our own errors (conflicts, corrupt rows, leases) pass through; SQLite's are wrapped."""
    return _failed(path, exc) if isinstance(exc, sqlite3.Error) else exc
