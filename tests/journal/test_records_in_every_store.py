"""Every store keeps small keyed records beside the journal (schedules, the webhook outbox):
`only_new` writes once per key whoever races, records list by key, delete says whether it
removed one. A file or schema made before the records table gains it when a writer opens it."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import psycopg
import pytest

from eudaimon.stores.base import EventStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.postgres._sql import SCHEMA_VERSION
from eudaimon.stores.records import Record, RecordStore
from eudaimon.stores.sqlite import SqliteStore
from eudaimon.stores.sqlite._schema import VERSION

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


async def test_records_write_once_list_and_delete(store: EventStore) -> None:
    assert isinstance(store, RecordStore)
    assert await store.load_records("k") == [] and await store.load_record("k", "a") is None
    assert await store.put_record("k", "b", "2")
    assert await store.put_record("k", "a", "1")
    assert await store.put_record("other", "a", "x")
    assert not await store.put_record("k", "a", "changed", only_new=True)
    assert await store.load_records("k") == [Record("k", "a", "1"), Record("k", "b", "2")]
    assert await store.put_record("k", "a", "3")
    assert await store.load_record("k", "a") == Record("k", "a", "3")
    assert await store.delete_record("k", "a") and not await store.delete_record("k", "a")
    assert await store.load_records("k", limit=5) == [Record("k", "b", "2")]


async def test_only_new_lets_one_of_many_racing_writers_win(store: EventStore) -> None:
    assert isinstance(store, RecordStore)
    won = await asyncio.gather(*(store.put_record("k", "same", str(i), only_new=True) for i in range(8)))
    assert sum(won) == 1
    [kept] = await store.load_records("k")
    assert kept.body == str(won.index(True))


async def test_a_version_4_sqlite_file_gains_records(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    made = SqliteStore(path)
    await made.list_runs()
    await made.close()
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE records; PRAGMA user_version = 4;")
    conn.close()
    store = SqliteStore(path)
    try:
        assert await store.put_record("k", "a", "1")
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (VERSION,) == (5,)
    finally:
        conn.close()


@pytest.mark.parametrize("store", [pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_version_3_postgres_schema_gains_records(store: EventStore) -> None:
    assert isinstance(store, PostgresStore)
    await store.list_runs()  # the schema is made
    schema = store.schema
    async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
        await conn.execute(f'DROP TABLE "{schema}".records')
        await conn.execute(f"UPDATE \"{schema}\".meta SET value = 3 WHERE name = 'schema_version'")
    reopened = PostgresStore(PG_DSN, schema=schema)
    try:
        assert await reopened.put_record("k", "a", "1")
        assert await reopened.load_records("k") == [Record("k", "a", "1")]
    finally:
        await reopened.close()
    async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
        row = await (
            await conn.execute(f"SELECT value FROM \"{schema}\".meta WHERE name = 'schema_version'")
        ).fetchone()
    assert row == (SCHEMA_VERSION,) == (5,)


async def test_expected_writes_only_over_that_body(store: EventStore) -> None:
    assert isinstance(store, RecordStore)
    assert not await store.put_record("k", "a", "1", expected="0")  # nothing there
    assert await store.put_record("k", "a", "1")
    assert not await store.put_record("k", "a", "2", expected="0")
    assert await store.put_record("k", "a", "2", expected="1")
    assert await store.load_record("k", "a") == Record("k", "a", "2")
