"""One helper object per event loop and store, shared by every run of a process.

Lease renewals and cancel-request polling are done once for all the runs a process drives on
a store, not once per run; their helpers live as long as the loop (a finished `asyncio.run`
drops them) and are keyed by the store object itself, so a new store at a reused `id` gets a
helper of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from eudaimon.runtime.loop.per_loop import PerLoop
from eudaimon.stores.base import EventStore


class _OfStore(Protocol):
    store: EventStore


H = TypeVar("H", bound=_OfStore)


class PerStore(Generic[H]):
    """`registry.get(store)`: the running loop's helper for `store`, made by `make` when new."""

    def __init__(self, make: Callable[[EventStore], H]) -> None:
        self._make = make
        self._by_loop: PerLoop[dict[int, H]] = PerLoop(lambda loop: {})

    def get(self, store: EventStore) -> H:
        """Raises `RuntimeError` outside a running event loop."""
        helpers = self._by_loop.get()
        found = helpers.get(id(store))
        if found is None or found.store is not store:
            found = helpers[id(store)] = self._make(store)
        return found
