"""`SqliteStore`: the embedded default journal — one file, WAL, group commit.

Why it is built this way:

- A SQLite connection belongs to the thread that opened it and its calls block. So the store
  owns ONE worker thread holding ONE connection; the async methods put a request on a queue and
  await a `concurrent.futures.Future` wrapped for whichever event loop is running. Nothing binds
  to a loop, so one store serves `asyncio.run(...)` after `asyncio.run(...)`.
- With `synchronous=FULL` a commit is an fsync: it is what an append costs. The worker takes
  every append waiting in the queue and commits them in one `BEGIN IMMEDIATE … COMMIT`, so
  appends that queue up while a commit is in progress share the next one (group commit). Each
  append runs in its own SAVEPOINT: one that conflicts fails alone, the others still commit.
- The expected-seq check reads `runs.next_seq` after `BEGIN IMMEDIATE`, which holds SQLite's
  write lock across processes, so two processes cannot both win a seq; the PRIMARY KEY
  (run_id, seq) of `events` is the hard fence behind that check.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from eudaimon.core.codec import event_from_columns, payload_to_json
from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, CorruptEvent, JournalError
from eudaimon.core.events import Event
from eudaimon.stores.base import RunSummary, check_batch, summary_fields

T = TypeVar("T")
Synchronous = Literal["full", "normal"]

_SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS events (
        run_id  TEXT    NOT NULL,
        seq     INTEGER NOT NULL,
        at      TEXT    NOT NULL,
        type    TEXT    NOT NULL,
        payload TEXT    NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id     TEXT    PRIMARY KEY,
        agent      TEXT    NOT NULL,
        thread_id  TEXT,
        created_at TEXT    NOT NULL,
        updated_at TEXT    NOT NULL,
        next_seq   INTEGER NOT NULL,
        last_type  TEXT    NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS runs_by_updated_at ON runs (updated_at)",
    "CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, updated_at)",
)
_MAX_GROUP = 512
"""Most requests taken from the queue at once: bounds how long one transaction holds the lock."""

_Row = tuple[str, int, str, str, str]


@dataclass(eq=False)
class _Append:
    run_id: str
    expected_seq: int
    events: Sequence[Event]
    done: Future[None] = field(default_factory=Future)


@dataclass(eq=False)
class _Read(Generic[T]):
    query: Callable[[sqlite3.Connection], T]
    done: Future[T] = field(default_factory=Future)


@dataclass(eq=False)
class _Stop:
    done: Future[None] = field(default_factory=Future)


_Request = _Append | _Read[Any] | _Stop
_R = TypeVar("_R", bound=_Append | _Read[Any])


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
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._lock = threading.Lock()  # orders "closed?" checks against enqueues and the stop request
        self._thread: threading.Thread | None = None
        self._closed = False
        self._commits = 0

    @property
    def path(self) -> str:
        return self._path

    @property
    def commit_count(self) -> int:
        """COMMITs issued for appends so far; one COMMIT may carry many appends (group commit)."""
        return self._commits

    async def append(self, run_id: str, expected_seq: int, events: Sequence[Event]) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`.

        Raises:
            ConcurrencyConflict: another writer appended first; nothing was written.
            CorruptEvent: the batch does not follow on from `expected_seq`.
            JournalError: the database failed, or the store is closed.
        """
        request = _Append(run_id, expected_seq, tuple(events))
        if not request.events:
            self._check_open()
            return
        await asyncio.wrap_future(self._enqueue(request).done)

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run.

        Raises:
            CorruptEvent, UnknownEventType: a row does not parse; it names the run and the seq.
        """
        return await asyncio.wrap_future(self._enqueue(_Read(lambda conn: _load(conn, run_id, after_seq))).done)

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first (ties: oldest run first, as `MemoryStore`)."""
        return await asyncio.wrap_future(self._enqueue(_Read(lambda conn: _list_runs(conn, limit, thread_id))).done)

    async def close(self) -> None:
        """Finish the requests already queued, then stop the worker and close the connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._thread is None:
                return
            stop = _Stop()
            self._requests.put(stop)
        await asyncio.wrap_future(stop.done)

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r})"

    # -- the caller's side ---------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self!r} is closed; open a new store to use this journal")

    def _enqueue(self, request: _R) -> _R:
        with self._lock:
            self._check_open()
            if self._thread is None:
                # Started on first use, so a store built and never used costs no thread.
                self._thread = threading.Thread(target=self._serve, name=f"eudaimon-{self!r}", daemon=True)
                self._thread.start()
            self._requests.put(request)
        return request

    # -- the worker thread: the only code that touches the connection ---------------------

    def _serve(self) -> None:
        conn: sqlite3.Connection | None = None
        broken: JournalError | None = None
        try:
            conn = self._connect()
        except (sqlite3.Error, OSError) as exc:
            broken = _journal_error(self._path, exc)
        except JournalError as exc:
            broken = exc
        while True:
            group = self._take_group()
            stop = next((r for r in group if isinstance(r, _Stop)), None)
            appends = [r for r in group if isinstance(r, _Append)]
            reads: list[_Read[Any]] = [r for r in group if isinstance(r, _Read)]
            if conn is None:
                failed: list[_Append | _Read[Any]] = [*appends, *reads]
                for request in failed:
                    request.done.set_exception(_copy(broken))
            else:
                self._commit_group(conn, appends)
                for read in reads:
                    _answer(self._path, conn, read)
            if stop is not None:
                if conn is not None:
                    conn.close()
                if stop.done.set_running_or_notify_cancel():  # close() may have been cancelled
                    stop.done.set_result(None)
                return

    def _take_group(self) -> list[_Request]:
        """Block for one request, then take every request already waiting (up to `_MAX_GROUP`)."""
        group: list[_Request] = [self._requests.get()]
        while len(group) < _MAX_GROUP and not isinstance(group[-1], _Stop):
            try:
                group.append(self._requests.get_nowait())
            except queue.Empty:
                break
        # A caller cancelled before we began: drop it. After this, its outcome is decided by us.
        # A stop is always honoured, even when the close() that sent it was cancelled.
        return [r for r in group if isinstance(r, _Stop) or r.done.set_running_or_notify_cancel()]

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=self._busy_timeout_s, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise JournalError(
                    f"the SQLite journal {self._path!r} has schema version {version}, newer than this "
                    f"eudaimon's {_SCHEMA_VERSION}; upgrade eudaimon to use it"
                )
            if version < _SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")  # several processes may create the schema at once
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _commit_group(self, conn: sqlite3.Connection, appends: list[_Append]) -> None:
        """Commit every append of the group in one transaction; each succeeds or fails alone."""
        if not appends:
            return
        outcomes: list[BaseException | None] = []
        encoded: list[list[_Row] | BaseException] = []
        for request in appends:
            # Encoding happens before BEGIN so that the cross-process write lock is held briefly.
            try:
                encoded.append(_encode(request))
            except Exception as exc:
                encoded.append(exc)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for request, rows in zip(appends, encoded, strict=True):
                    outcomes.append(rows if isinstance(rows, BaseException) else _append_one(conn, request, rows))
                if any(outcome is None for outcome in outcomes):
                    conn.execute("COMMIT")
                    self._commits += 1
                else:
                    conn.execute("ROLLBACK")  # nothing to write: spare the fsync
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            for request in appends:
                request.done.set_exception(_journal_error(self._path, exc))
            return
        for request, outcome in zip(appends, outcomes, strict=True):
            if outcome is None:
                request.done.set_result(None)
            else:
                request.done.set_exception(outcome)


def _encode(request: _Append) -> list[_Row]:
    return [(e.run_id, e.seq, e.at.isoformat(), e.type, payload_to_json(e.data)) for e in request.events]


def _append_one(conn: sqlite3.Connection, request: _Append, rows: list[_Row]) -> BaseException | None:
    """One compare-and-append inside the group's transaction; returns the error that refused it."""
    run_id, expected, events = request.run_id, request.expected_seq, request.events
    conn.execute("SAVEPOINT append")
    try:
        found = conn.execute("SELECT next_seq FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        actual = int(found[0]) if found else 0
        if expected != actual:
            raise ConcurrencyConflict(run_id, expected, actual)
        check_batch(run_id, expected, events)
        try:
            conn.executemany("INSERT INTO events (run_id, seq, at, type, payload) VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.IntegrityError:
            # `runs` disagrees with `events` (a foreign writer, a hand edit): the key still fences.
            top = conn.execute("SELECT MAX(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
            raise ConcurrencyConflict(run_id, expected, int(top) + 1) from None
        last = events[-1]
        next_seq = expected + len(events)
        if found is None:
            agent, thread_id = summary_fields(events)
            conn.execute(
                "INSERT INTO runs (run_id, agent, thread_id, created_at, updated_at, next_seq, last_type)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, agent, thread_id, _sortable(events[0].at), _sortable(last.at), next_seq, last.type),
            )
        else:
            conn.execute(
                "UPDATE runs SET updated_at = ?, next_seq = ?, last_type = ? WHERE run_id = ?",
                (_sortable(last.at), next_seq, last.type, run_id),
            )
    except Exception as exc:
        conn.execute("ROLLBACK TO append")  # if this fails too, the whole group fails
        conn.execute("RELEASE append")
        return exc
    conn.execute("RELEASE append")
    return None


def _load(conn: sqlite3.Connection, run_id: str, after_seq: int) -> list[Event]:
    rows = conn.execute(
        "SELECT seq, at, type, payload FROM events WHERE run_id = ? AND seq > ? ORDER BY seq", (run_id, after_seq)
    ).fetchall()
    events: list[Event] = []
    expected = max(after_seq, -1) + 1
    for seq, at, tag, payload in rows:
        if seq != expected:
            raise CorruptEvent(run_id, expected, f"the journal has no seq {expected}; the next row is seq {seq}")
        try:
            events.append(event_from_columns(run_id, seq, at, tag, payload))
        except (TypeError, ValueError) as exc:  # a NULL or a non-text column written by hand
            raise CorruptEvent(run_id, seq, str(exc), event_type=tag) from exc
        expected += 1
    return events


def _list_runs(conn: sqlite3.Connection, limit: int, thread_id: str | None) -> list[RunSummary]:
    where, args = ("WHERE thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    rows = conn.execute(
        "SELECT run_id, agent, thread_id, created_at, updated_at, next_seq, last_type FROM runs "
        f"{where} ORDER BY updated_at DESC, rowid ASC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [
        RunSummary(run, agent, thread, datetime.fromisoformat(created), datetime.fromisoformat(updated), count, last)
        for run, agent, thread, created, updated, count, last in rows
    ]


def _answer(path: str, conn: sqlite3.Connection, read: _Read[Any]) -> None:
    try:
        read.done.set_result(read.query(conn))
    except sqlite3.Error as exc:
        read.done.set_exception(_journal_error(path, exc))
    except Exception as exc:
        read.done.set_exception(exc)


def _sortable(at: datetime) -> str:
    """A time whose text sorts in time order: aware times in UTC, always with microseconds."""
    return (at.astimezone(UTC) if at.tzinfo is not None else at).isoformat(timespec="microseconds")


def _journal_error(path: str, exc: BaseException) -> JournalError:
    error = JournalError(f"the SQLite journal {path!r} failed: {exc}")
    error.__cause__ = exc
    return error


def _copy(error: JournalError | None) -> JournalError:
    """A fresh exception per caller, so concurrent raisers do not share one traceback."""
    fresh = JournalError(str(error))
    fresh.__cause__ = error
    return fresh
