"""Small keyed records a store keeps beside the journal: the schedules and the webhook outbox.

They are not events: a schedule is configuration an operator edits, and an outbox row is the
state of a delivery (attempts, the receiver's answer). They live in the store so that every
server on one store sees the same ones and they survive restarts, as the journal does. Each is
a JSON text under `(kind, key)`; `put_record(..., only_new=True)` writes only when the key is
free, which is how two servers that find one event enqueue one delivery; with `expected=` it
writes only over that body, so a change made meanwhile by another server is not overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from eudaimon.core.errors import ConfigurationError
from eudaimon.stores.base import EventStore


@dataclass(frozen=True, slots=True)
class Record:
    kind: str
    key: str
    body: str


@runtime_checkable
class RecordStore(Protocol):
    async def put_record(
        self, kind: str, key: str, body: str, *, only_new: bool = False, expected: str | None = None
    ) -> bool:
        """Write `body` under `(kind, key)`; with `only_new`, only if no record is there; with
        `expected`, only if the record's body is that (a compare-and-set). Returns whether it wrote."""
        ...

    async def load_records(self, kind: str, *, limit: int = 10_000) -> list[Record]:
        """The records of `kind`, by key."""
        ...

    async def load_record(self, kind: str, key: str) -> Record | None: ...

    async def delete_record(self, kind: str, key: str) -> bool:
        """Remove the record; returns whether there was one."""
        ...


def records_of(store: EventStore, *, what: str) -> RecordStore:
    """`store` as a `RecordStore`, or a `ConfigurationError` saying `what` needs one."""
    if not isinstance(store, RecordStore):
        raise ConfigurationError(
            f"{what} needs a store that keeps records (SQLite, PostgreSQL or memory); {store!r} does not"
        )
    return store
