"""A commit that takes a lapsed lease back extends the keeper's reckoning of that lease.

A busy process's commit can wait (every pooled connection in use) until its lease has lapsed;
if no one else took the lease, the commit's fence takes it back for a full lifetime and lands
(`stores.base.Fence`). The keeper used to keep its old deadline, already past, so
`check_effect` refused the WRITE whose intent that very commit had made durable, until the
next renewal: the driver stopped and the call became an unknown outcome. Against the real
PostgreSQL server the commit is held up by a busy pool, as under load; on SQLite by a COMMIT
held on the store's worker.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import psycopg
import pytest

from eudaimon.core.events import Event, ModelAttemptStarted, RunStarted
from eudaimon.core.messages import Message
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore, _worker
from support.stores import fresh_store

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
TTL_S = 1.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[PostgresStore]:
    """A store of one pooled connection (so one busy statement holds every commit up)."""
    async with fresh_store("postgres", tmp_path, min_size=1, max_size=1) as built:
        assert isinstance(built, PostgresStore)
        yield built


@pytest.mark.postgres
async def test_an_intent_committed_by_taking_the_lease_back_may_be_acted_on(store: PostgresStore) -> None:
    """Invariant: once a fenced commit that took the lapsed lease back has landed, the effect
    check passes for that commit (its lease holds a lifetime from when it was sent)."""
    keeper = LeaseKeeper(store, "run:r", ttl_s=TTL_S)
    journal = RunJournal(store, RunState(run_id="r"))
    await keeper.acquire()
    journal.guard, journal.fence, journal.effect_guard = keeper.ensure, keeper.fence, keeper.check_effect
    try:
        journal.record(RunStarted(agent="a", input="hi", messages=(Message.user("hi", id="u0"),)))
        await journal.flush()

        busy = asyncio.create_task(_hold_the_pool(store, 2 * TTL_S))  # past the lease's lifetime
        await asyncio.sleep(0.05)  # the statement holds the one connection
        journal.record(ModelAttemptStarted(step=0, request_id="req", request_digest=""))
        await journal.flush()  # waited for the connection; the lease lapsed meanwhile
        await busy

        assert await _lease_owner(store, "run:r") == keeper.owner  # the commit took it back
        assert journal.effect_guard is not None
        journal.effect_guard(journal.committed_at)  # raised LeaseLost before the fix
    finally:
        await keeper.release()


async def _hold_the_pool(store: PostgresStore, seconds: float) -> None:
    async with store._connection() as conn:
        await conn.execute("SELECT pg_sleep(%s)", (seconds,))


async def _lease_owner(store: PostgresStore, name: str) -> str | None:
    async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
        row = await (
            await conn.execute(
                f'SELECT owner FROM "{store.schema}".leases WHERE name = %s AND expires_at > now()', (name,)
            )
        ).fetchone()
    return None if row is None else str(row[0])


async def test_sqlite_tells_the_keeper_too(tmp_path: Path) -> None:
    """Invariant: the same holds on SQLite, where the commit waits behind another run's COMMIT
    held on the store's worker (as behind a slow disk) while the lease lapses."""
    store = _HeldStore(tmp_path / "runs.db")
    keeper = LeaseKeeper(store, "run:r", ttl_s=TTL_S)
    journal = RunJournal(store, RunState(run_id="r"))
    await keeper.acquire()
    journal.guard, journal.fence, journal.effect_guard = keeper.ensure, keeper.fence, keeper.check_effect
    try:
        journal.record(RunStarted(agent="a", input="hi", messages=(Message.user("hi", id="u0"),)))
        await journal.flush()
        journal.record(ModelAttemptStarted(step=0, request_id="req", request_digest=""))
        other = RunStarted(agent="a", input="other", messages=(Message.user("o", id="o0"),))
        _HeldCommits.held.set()
        ahead = asyncio.ensure_future(store.append("other", 0, [_event("other", 0, other)]))
        async with asyncio.timeout(10):
            while not _HeldCommits.waiting.is_set():
                await asyncio.sleep(0.001)
        flushing = asyncio.ensure_future(journal.flush())  # queued behind the held COMMIT
        await asyncio.sleep(2 * TTL_S)  # the lease lapses meanwhile
        _HeldCommits.held.clear()
        _HeldCommits.release.set()
        await ahead
        await flushing
        assert journal.effect_guard is not None
        journal.effect_guard(journal.committed_at)  # raised LeaseLost before the fix
    finally:
        _HeldCommits.release.set()
        await keeper.release()
        await store.close()


def _event(run_id: str, seq: int, data: RunStarted) -> Event:
    return Event(run_id=run_id, seq=seq, at=datetime.now(UTC), type=data.type, data=data)


class _HeldCommits(_worker.CommitWorker):
    """Holds a COMMIT on the SQLite store's worker while `held` is set."""

    held: ClassVar[threading.Event] = threading.Event()
    release: ClassVar[threading.Event] = threading.Event()
    waiting: ClassVar[threading.Event] = threading.Event()

    def _commit(self, conn: sqlite3.Connection) -> None:
        if self.held.is_set():
            self.waiting.set()
            assert self.release.wait(10), "the test never let the commit go"
        super()._commit(conn)


class _HeldStore(SqliteStore):
    _worker_type = _HeldCommits
