"""The journal: `EventStore` and its backends, chosen by URL with `open_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eudaimon.stores.base import EventStore, RunSummary
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.url import open_store

if TYPE_CHECKING:
    from eudaimon.stores.postgres import PostgresStore
    from eudaimon.stores.sqlite import SqliteStore


def __getattr__(name: str) -> Any:
    if name == "SqliteStore":
        from eudaimon.stores.sqlite import SqliteStore

        return SqliteStore
    if name == "PostgresStore":
        from eudaimon.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module 'eudaimon.stores' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["EventStore", "MemoryStore", "PostgresStore", "RunSummary", "SqliteStore", "open_store"]
