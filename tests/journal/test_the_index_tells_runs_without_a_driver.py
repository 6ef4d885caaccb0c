"""Listings tell a running run no process drives from one a process or an engine drives, from
the index's rows and one read of the leases, on every backend (`driverless_runs`).

The journal reads `running` alike for a run at work and one whose process was killed. The run's
lease tells them apart for a process's own loop; a run an engine drives (Temporal) holds no lease,
so its row names the engine, as its `run_started` did, and it is never called driverless. A row
written before rows named their engine is folded to learn it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from eudaimon.core.events import RunCompleted
from eudaimon.core.run_index import RunRow
from eudaimon.runtime.process.drivers import driverless_runs, run_lease_name
from eudaimon.stores import EventStore, index
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore
from support.databases import PG_DSN
from support.stores import fresh_store

ENGINE = "temporal://127.0.0.1:7233/runs"


async def _start(store: EventStore, samples: Any, run_id: str, *, engine: str = "", done: bool = False) -> None:
    first = replace(samples.started(), engine=engine)
    payloads = [first, RunCompleted(output="ok")] if done else [first]
    await store.append(run_id, 0, samples.make_events(run_id, payloads))


async def _rows(store: EventStore) -> list[RunRow]:
    return await index.query_runs(store, index.RunQuery(limit=100))


async def test_only_a_running_run_of_a_process_with_no_lease_held_is_driverless(
    store: EventStore, samples: Any
) -> None:
    await _start(store, samples, "r-driven")
    await _start(store, samples, "r-orphan")
    await _start(store, samples, "r-engine", engine=ENGINE)
    await _start(store, samples, "r-done", done=True)
    await store.acquire_lease(run_lease_name("r-driven"), "host:1:a.1", 30)

    rows = await _rows(store)

    assert {row.run_id: row.engine for row in rows} == {
        "r-driven": "",
        "r-orphan": "",
        "r-engine": ENGINE,
        "r-done": "",
    }
    assert await driverless_runs(store, rows) == {"r-orphan"}


async def test_a_lease_released_makes_its_run_driverless(store: EventStore, samples: Any) -> None:
    await _start(store, samples, "r1")
    await store.acquire_lease(run_lease_name("r1"), "host:1:a.1", 30)
    assert await driverless_runs(store, await _rows(store)) == frozenset()

    await store.release_lease(run_lease_name("r1"), "host:1:a.1")

    assert await driverless_runs(store, await _rows(store)) == {"r1"}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_row_written_before_rows_named_their_engine_is_folded_to_tell(
    kind: str, samples: Any, tmp_path: Path
) -> None:
    """An older version's row has no `engine`: the run's journal says whether an engine drives it.
    (A `MemoryStore` never holds rows another version wrote.)"""
    async with fresh_store(kind, tmp_path) as store:
        await _start(store, samples, "r-old-local")
        await _start(store, samples, "r-old-engine", engine=ENGINE)
        await _forget_engines(store)
        reader = SqliteStore(tmp_path / "runs.db") if kind == "sqlite" else store  # a fresh cache of rows
        try:
            rows = await _rows(reader)

            assert {row.run_id: row.engine for row in rows} == {"r-old-local": None, "r-old-engine": None}
            assert await driverless_runs(reader, rows) == {"r-old-local"}
        finally:
            if reader is not store:
                await reader.close()


def test_a_row_without_an_engine_reads_back_as_unknown_and_one_with_it_round_trips() -> None:
    row = RunRow("r1", agent="a", engine=ENGINE)
    body = json.loads(row.to_json())

    assert RunRow.from_json(row.to_json()) == row
    del body["engine"]
    assert RunRow.from_json(json.dumps(body)).engine is None


async def _forget_engines(store: EventStore) -> None:
    """Rewrite every row's body as a version before rows named their engine wrote it."""
    if isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as conn:
            for run_id, body in conn.execute("SELECT run_id, body FROM run_index").fetchall():
                conn.execute("UPDATE run_index SET body = ? WHERE run_id = ?", (_without_engine(body), run_id))
    elif isinstance(store, PostgresStore):
        async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
            rows = await (await conn.execute(f'SELECT run_id, body FROM "{store.schema}".run_index')).fetchall()
            for run_id, body in rows:
                await conn.execute(
                    f'UPDATE "{store.schema}".run_index SET body = %s WHERE run_id = %s',
                    (_without_engine(body), run_id),
                )


def _without_engine(body: str) -> str:
    parsed = json.loads(body)
    assert "engine" in parsed
    del parsed["engine"]
    return json.dumps(parsed)


async def test_an_old_row_whose_journal_is_corrupt_is_left_unmarked_and_the_listing_stands(
    samples: Any, tmp_path: Path
) -> None:
    """A listing marks nothing it cannot tell, and does not fail for it: the corrupt row is
    reported by whatever reads the run itself."""
    async with fresh_store("sqlite", tmp_path) as store:
        await _start(store, samples, "r-old-broken")
        await _start(store, samples, "r-old-local")
        await _forget_engines(store)
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        conn.execute("UPDATE events SET payload = '{broken' WHERE run_id = 'r-old-broken' AND seq = 0")
    conn.close()
    reader = SqliteStore(tmp_path / "runs.db")
    try:
        assert await driverless_runs(reader, await _rows(reader)) == {"r-old-local"}
    finally:
        await reader.close()
