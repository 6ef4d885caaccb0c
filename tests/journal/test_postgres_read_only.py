"""Invariant: a PostgreSQL store opened read-only never writes: it creates no schema, sends no
write, and its sessions are read-only on the server, so even a statement it should not have sent
cannot write. It reads everything a writer wrote.

Bug (issue 14): `read_only` was ignored by PostgreSQL, so read commands (`eudaimon runs list`,
`runs show`, …) on a typo'd database or schema created an empty journal there and said "no runs".
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from eudaimon.core.errors import JournalError
from eudaimon.stores import open_store
from eudaimon.stores.base import Snapshot
from eudaimon.stores.postgres import PostgresStore
from support.databases import postgres_database

pytestmark = pytest.mark.postgres

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"eudaimon_test_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        _sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def database() -> Iterator[str]:
    """A database of its own, so that the CLI's default schema (`eudaimon`) is a scratch one."""
    with postgres_database("eudaimon_test", DSN) as url:
        yield url


def _sql(query: str, *args: Any, dsn: str = DSN) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(query, args or None)
        return cursor.fetchall() if cursor.description else []


def _schema_exists(name: str, dsn: str = DSN) -> bool:
    return bool(_sql("SELECT 1 FROM pg_namespace WHERE nspname = %s", name, dsn=dsn))


async def test_reading_a_missing_schema_is_an_error_and_creates_nothing(schema: str) -> None:
    """A read-only store on a schema nobody wrote says the journal is empty and how one is
    created, for every read, and the schema still does not exist afterwards."""
    store = PostgresStore(DSN, schema=schema, read_only=True)
    try:
        for read in (store.list_runs(), store.load("run-x"), store.load_snapshot("run:run-x")):
            with pytest.raises(JournalError, match="is empty: it has not been initialised") as caught:
                await read
            assert schema in str(caught.value) and "without read_only" in str(caught.value)
    finally:
        await store.close()
    assert not _schema_exists(schema)


async def test_a_read_only_store_reads_what_a_writer_wrote(schema: str, samples: Any) -> None:
    routed = open_store(DSN, read_only=True)  # what the CLI's read commands open
    assert isinstance(routed, PostgresStore) and "read_only=True" in repr(routed)
    await routed.close()
    writer = PostgresStore(DSN, schema=schema)
    reader = PostgresStore(DSN, schema=schema, read_only=True)
    try:
        events = samples.make_events("run-a", samples.every_payload())
        await writer.append("run-a", 0, events)
        await writer.save_snapshot(Snapshot("run:run-a", 3, "{}"))

        assert await reader.load("run-a") == events
        assert [s.run_id for s in await reader.list_runs()] == ["run-a"]
        assert await reader.load_snapshot("run:run-a") == Snapshot("run:run-a", 3, "{}")
    finally:
        await reader.close()
        await writer.close()


async def test_every_write_through_a_read_only_store_is_refused_and_changes_nothing(schema: str, samples: Any) -> None:
    writer = PostgresStore(DSN, schema=schema)
    reader = PostgresStore(DSN, schema=schema, read_only=True)
    try:
        await writer.append("run-a", 0, samples.make_events("run-a", [samples.started()]))
        await writer.acquire_lease("run:run-a", "alice", 30)
        await writer.save_snapshot(Snapshot("run:run-a", 0, "{}"))
        before = _contents(schema)

        writes = [
            reader.append("run-a", 1, samples.make_events("run-a", [samples.attempt(0)], start=1)),
            reader.delete_run("run-a"),
            reader.acquire_lease("run:run-b", "bob", 30),
            reader.renew_leases([("run:run-a", "alice")], 30),
            reader.release_lease("run:run-a", "alice"),
            reader.save_snapshot(Snapshot("run:run-a", 9, "{}")),
            reader.delete_snapshots(),
        ]
        for write in writes:
            with pytest.raises(JournalError, match="opened read-only; open it without read_only to write"):
                await write
        assert _contents(schema) == before
        assert reader.commit_count == 0
    finally:
        await reader.close()
        await writer.close()


async def test_the_server_refuses_a_write_on_a_read_only_store_s_session(schema: str) -> None:
    """The store's own check is not the only guard: its sessions are read-only on the server,
    so a write statement sent on one fails with SQLSTATE 25006 and writes nothing."""
    writer = PostgresStore(DSN, schema=schema)
    await writer.list_runs()  # a writer made the tables
    await writer.close()
    reader = PostgresStore(DSN, schema=schema, read_only=True, min_size=0, max_size=1)
    try:
        await reader.list_runs()
        for _ in range(2):  # the pooled connection, and a fresh one of its own
            with pytest.raises(JournalError, match="25006"):
                async with reader._connection() as conn:
                    await conn.execute(f'INSERT INTO "{schema}".leases VALUES (%s, %s, now())', ("x", "y"))
        conn = await reader._pools.connect()
        async with conn:
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                await conn.execute(f'DELETE FROM "{schema}".meta')
    finally:
        await reader.close()
    assert _sql(f'SELECT count(*) FROM "{schema}".leases') == [(0,)]
    assert _sql(f'SELECT count(*) FROM "{schema}".meta') == [(1,)]


@pytest.mark.parametrize("command", [["runs", "list"], ["runs", "show", "run_x"], ["threads", "list"]])
def test_read_commands_on_an_empty_database_say_so_and_create_nothing(database: str, command: list[str]) -> None:
    """`eudaimon runs list --store postgresql://…` on a database with no journal is one line
    saying the journal is empty, with no traceback, and no schema appears there."""
    result = subprocess.run(
        [sys.executable, "-m", "eudaimon", *command, "--store", database],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "is empty: it has not been initialised" in lines[0] and "Traceback" not in result.stderr
    assert not _schema_exists("eudaimon", dsn=database)


def _contents(schema: str) -> list[list[tuple[Any, ...]]]:
    return [
        _sql(f'SELECT * FROM "{schema}".{table} ORDER BY 1')
        for table in ("events", "runs", "leases", "snapshots", "meta", "texts", "messages", "message_refs")
    ]
