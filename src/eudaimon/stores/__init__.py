"""The journal: `EventStore` and its backends, chosen by URL with `open_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eudaimon._lazy import lazy
from eudaimon.stores.base import EventStore, RunSummary
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.url import open_store

if TYPE_CHECKING:
    from eudaimon.stores.postgres import PostgresStore
    from eudaimon.stores.sqlite import SqliteStore


if not TYPE_CHECKING:  # a backend imports its driver: load it only when asked for
    __getattr__, __dir__ = lazy(__name__, __file__)

__all__ = ["EventStore", "MemoryStore", "PostgresStore", "RunSummary", "SqliteStore", "open_store"]
