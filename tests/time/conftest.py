"""Fixtures for runs that live in time: a real store on each backend (a SQLite file, a fresh
PostgreSQL schema on `EUDAIMON_TEST_PG_DSN`) and a second store on the same journal, for a second
process's view."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from _time_support import Opener

from eudaimon.stores.base import EventStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture(params=["sqlite", "postgres"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens stores on one journal, as separate processes would; all closed after the test."""
    opened: list[EventStore] = []
    schema = f"eudaimon_time_{uuid.uuid4().hex[:12]}"

    def opener() -> EventStore:
        store: EventStore = (
            SqliteStore(tmp_path / "runs.db")
            if request.param == "sqlite"
            else PostgresStore(PG_DSN, schema=schema, min_size=1, max_size=2)
        )
        opened.append(store)
        return store

    yield opener
    for store in opened:
        await store.close()
    if request.param == "postgres":
        async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
