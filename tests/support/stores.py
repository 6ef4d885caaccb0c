"""Stores that count what the runtime asks of them, for tests that bound statements, not time."""

from __future__ import annotations

from collections.abc import Sequence

from eudaimon.core.events import Event
from eudaimon.stores.base import Fence, Snapshot
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.sqlite import SqliteStore


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
