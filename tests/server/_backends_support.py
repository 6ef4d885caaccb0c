"""A real `eudaimon serve` on either backend: a SQLite file, or a PostgreSQL database of its own
(created for the server, dropped after it stops) on `EUDAIMON_TEST_PG_DSN`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from _server_support import Server

from support.databases import PG_DSN, postgres_database

__all__ = ["BACKENDS", "PG_DSN", "served_on", "started_on"]

BACKENDS = ("sqlite", "postgres")
S = TypeVar("S", bound=Server)


@contextlib.contextmanager
def started_on(
    backend: str, where: Path, make: Callable[[Path, str | None], S], prefix: str = "eudaimon_web"
) -> Iterator[S]:
    """The server `make(db, store_url)` started on `backend` (`store_url` None: the SQLite file
    `db`), stopped on exit, and its PostgreSQL database dropped after it stops."""
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            server = make(where / "runs.db", None)
        else:
            server = make(where / "unused.db", stack.enter_context(postgres_database(prefix)))
        try:
            server.start()
            yield server
        finally:
            server.stop()


@contextlib.contextmanager
def served_on(backend: str, where: Path, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    """A started server of `_server_agents` on `backend`, stopped (and its database dropped) on exit."""
    with started_on(backend, where, lambda db, store: Server(db, env=env or {}, store=store)) as server:
        yield server
