"""A real `eudaimon serve` on either backend: a SQLite file, or a PostgreSQL database of its own
(created for the server, dropped after it stops) on `EUDAIMON_TEST_PG_DSN`."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import psycopg
from _server_support import Server

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
BACKENDS = ("sqlite", "postgres")


@contextlib.contextmanager
def served_on(backend: str, where: Path, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    """A started server on `backend`, stopped (and its database dropped) on exit."""
    if backend == "sqlite":
        server = Server(where / "runs.db", env=env or {})
        try:
            yield server.start()
        finally:
            server.stop()
        return
    name = f"eudaimon_web_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = PG_DSN.rpartition("/")
    server = Server(where / "unused.db", env=env or {}, store=f"{base}/{name}")
    try:
        yield server.start()
    finally:
        server.stop()
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
