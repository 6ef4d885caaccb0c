"""Helpers for the CLI tests: reading the temporary journal as a second, independent reader."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from typer.testing import Result

from eudaimon.core.events import Event
from eudaimon.core.state import RunState
from eudaimon.stores.sqlite import SqliteStore

Invoke = Callable[..., Result]
"""`cli("runs", "list", env={...})` runs the real CLI in-process and returns click's `Result`."""

T = TypeVar("T")


class Journal:
    """Reads the temporary journal directly, with a store of its own, as a second reader would."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run_ids(self) -> list[str]:
        async def read(store: SqliteStore) -> list[str]:
            return [summary.run_id for summary in await store.list_runs()]

        return self._with_store(read)

    def events(self, run_id: str) -> list[Event]:
        async def read(store: SqliteStore) -> list[Event]:
            return await store.load(run_id)

        return self._with_store(read)

    def state(self, run_id: str) -> RunState:
        state = RunState.from_events(self.events(run_id))
        assert state is not None
        return state

    def _with_store(self, read: Callable[[SqliteStore], Awaitable[T]]) -> T:
        async def run() -> T:
            store = SqliteStore(self.path)
            try:
                return await read(store)
            finally:
                await store.close()

        return asyncio.run(run())
