"""A commit that takes a lapsed lease back extends the keeper's reckoning of that lease.

A busy process's commit can wait (every pooled connection in use) until its lease has lapsed;
if no one else took the lease, the commit's fence takes it back for a full lifetime and lands
(`stores.base.Fence`). The keeper used to keep its old deadline, already past, so
`check_effect` refused the WRITE whose intent that very commit had made durable, until the
next renewal: the driver stopped and the call became an unknown outcome. Against the real
PostgreSQL server: the commit is held up by a busy pool, as under load.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest

from eudaimon.core.events import ModelAttemptStarted, RunStarted
from eudaimon.core.messages import Message
from eudaimon.core.state import RunState
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.leases import LeaseKeeper
from eudaimon.stores.postgres import PostgresStore

pytestmark = pytest.mark.postgres

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
TTL_S = 1.0


@pytest.fixture
async def store() -> AsyncIterator[PostgresStore]:
    """A store of one pooled connection (so one busy statement holds every commit up)."""
    schema = f"eudaimon_test_{uuid.uuid4().hex[:12]}"
    built = PostgresStore(DSN, schema=schema, min_size=1, max_size=1)
    try:
        yield built
    finally:
        await built.close()
        async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


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
