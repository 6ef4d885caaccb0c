"""Fresh journals of either kind, and stores that count what the runtime asks of them, for tests
that bound statements, not time."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

from eudaimon.core.events import Event
from eudaimon.stores.base import EventStore, Fence, Lease, Snapshot
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.sqlite import SqliteStore
from support.databases import PG_DSN


@contextlib.asynccontextmanager
async def fresh_store(kind: str, folder: Path, **pool: Any) -> AsyncIterator[EventStore]:
    """A new journal: "sqlite", a file in `folder`; "postgres", a schema of its own on
    `EUDAIMON_TEST_PG_DSN` (`pool`: the `PostgresStore`'s pool options), dropped afterwards."""
    if kind == "sqlite":
        sqlite = SqliteStore(folder / "runs.db")
        try:
            yield sqlite
        finally:
            await sqlite.close()
        return
    from eudaimon.stores.postgres import PostgresStore

    schema = f"eudaimon_test_{uuid.uuid4().hex[:12]}"
    postgres = PostgresStore(PG_DSN, schema=schema, **pool)
    try:
        yield postgres
    finally:
        await postgres.close()
        async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


class _CountsRenewals:
    """Counts renewing statements (`renew_leases` calls) and the leases they carry."""

    statements = 0
    renewed = 0

    async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
        self.statements += 1
        self.renewed += len(leases)
        renewed: list[bool] = await super().renew_leases(leases, ttl_s)  # type: ignore[misc]
        return renewed


class RenewalCountingMemoryStore(_CountsRenewals, MemoryStore):
    """A `MemoryStore` counting its lease renewals."""


class RenewalCountingSqliteStore(_CountsRenewals, SqliteStore):
    """A `SqliteStore` counting its lease renewals."""


class BatchRecordingStore(MemoryStore):
    """A `MemoryStore` keeping the event types of each batch it committed: the journal's commit
    boundaries, which the events themselves do not carry."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        await super().append(run_id, expected_seq, events, snapshot, fence=fence)
        self.batches.append([e.type for e in events])


class _CountsLeaseTrips:
    """Counts the round trips a store's lease writes cost: the takings and givings-up asked for
    in one turn of the event loop count as one (a `SqliteStore`'s worker takes them in one
    transaction), and each later turn's as one more. Renewals are not counted."""

    lease_trips = 0
    _trip_open = False

    async def _lease_trip(self) -> None:
        if not self._trip_open:
            self._trip_open = True
            self.lease_trips += 1
            asyncio.get_running_loop().call_soon(self._close_trip)  # after the callbacks of this turn
        await asyncio.sleep(0)  # the answer comes in a later turn, as a real store's does

    def _close_trip(self) -> None:
        self._trip_open = False

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        await self._lease_trip()
        lease: Lease = await super().acquire_lease(name, owner, ttl_s)  # type: ignore[misc]
        return lease

    async def release_lease(self, name: str, owner: str) -> None:
        await self._lease_trip()
        await super().release_lease(name, owner)  # type: ignore[misc]


class LeaseTripCountingStore(_CountsLeaseTrips, MemoryStore):
    """A `MemoryStore` counting the round trips its lease writes would cost."""


class LeaseTripCountingSqliteStore(_CountsLeaseTrips, SqliteStore):
    """A `SqliteStore` (a real file) counting the round trips its lease writes cost."""
