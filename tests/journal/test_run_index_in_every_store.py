"""Every store keeps the run index with its appends: the row a store returns is the row of the
run's journal (whichever store instance, or process, appended last), its queries filter, search
and page like the reference in `stores.index`, the dashboard's GROUP BY agrees with the same
figures computed in Python, and older SQLite and PostgreSQL journals are indexed in place.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from eudaimon.core.errors import JournalError
from eudaimon.core.events import (
    ApprovalRequested,
    Event,
    EventData,
    ModelCalled,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCompleted,
    ToolStarted,
)
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.core.run_index import RunRow
from eudaimon.stores import EventStore
from eudaimon.stores.index import Cursor, RunQuery, day_rows, select
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore
from eudaimon.stores.sqlite._schema import VERSION

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")

T0 = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def _run(run_id: str, agent: str, ending: str, day: int, *, thread: str | None = None) -> list[list[EventData]]:
    """A run's appends: started, a model call with a tool call, then paused or ended."""
    call = ToolCall(f"call-{run_id}", "send_wire" if ending == "waiting" else "lookup", {})
    batches: list[list[EventData]] = [
        [RunStarted(agent=agent, input=f"Input of {run_id} ZÜRICH", messages=(Message.user("hi"),), thread_id=thread)],
        [
            ModelCalled(
                step=0,
                request_id="r0",
                message=Message.assistant("", tool_calls=[call]),
                usage=Usage(10 + day, 3),
                cost_usd=0.25,
            )
        ],
    ]
    if ending == "waiting":
        batches.append([ApprovalRequested(call_id=call.id, tool=call.name)])
    else:
        batches.append([ToolStarted(call_id=call.id, tool=call.name, idempotency_key="k")])
        batches.append([ToolCompleted(call_id=call.id, tool=call.name, output="ok")])
        batches.append([RunCompleted(output=f"Output of {run_id}") if ending == "done" else RunFailed(error="broke")])
    return batches


async def _write(store: EventStore, run_id: str, batches: list[list[EventData]], at: datetime) -> None:
    seq = 0
    for n, batch in enumerate(batches):
        events = [
            Event.of(run_id, seq + i, at + timedelta(seconds=n * (1 + len(run_id) % 3)), p) for i, p in enumerate(batch)
        ]
        await store.append(run_id, seq, events)
        seq += len(events)


RUNS = [  # run id, agent, ending, day offset, thread
    ("r01", "billing", "done", 0, "t1"),
    ("r02", "billing", "failed", 0, "t1"),
    ("r03", "billing", "waiting", 1, None),
    ("r04", "support", "done", 1, "t2"),
    ("r05", "support", "waiting", 2, None),
    ("r06", "support", "done", 2, None),
    ("r07", "billing", "done", 2, None),
]


async def _fill(store: EventStore) -> dict[str, RunRow]:
    for n, (run_id, agent, ending, day, thread) in enumerate(RUNS):
        await _write(
            store, run_id, _run(run_id, agent, ending, day, thread=thread), T0 + timedelta(days=day, minutes=n)
        )
    rows = {}
    for run_id, *_ in RUNS:
        row = RunRow.of(await store.load(run_id))
        assert row is not None
        rows[run_id] = row
    return rows


async def test_rows_are_the_rows_of_the_journals(store: EventStore) -> None:
    """Invariant: after its appends, each run's stored row is `RunRow.of(its journal)`: status
    (awaiting_approval, completed, failed), tokens, cost, tools, outcome."""
    rows = await _fill(store)
    for run_id, row in rows.items():
        assert await store.run_row(run_id) == row  # type: ignore[attr-defined]
    assert rows["r03"].status == "awaiting_approval" and rows["r03"].pending_approvals == 1
    assert rows["r02"].status == "failed" and rows["r02"].error_preview == "broke"
    assert rows["r01"].status == "completed" and rows["r01"].tools == ("lookup",) and rows["r01"].cost == 0.25


async def test_queries_filter_search_and_page_like_the_reference(store: EventStore) -> None:
    """Invariant: every filter (status, agent, thread, q, since/until, statuses) and the keyset
    cursor select what `stores.index.select` selects from the same rows, in the same order."""
    rows = await _fill(store)
    queries = [
        RunQuery(),
        RunQuery(status="awaiting_approval"),
        RunQuery(status="completed", agent="support"),
        RunQuery(thread_id="t1"),
        RunQuery(q="zürich"),
        RunQuery(q="OUTPUT OF R04"),
        RunQuery(q="call-r05"),
        RunQuery(q="send_wire"),
        RunQuery(q="r06"),
        RunQuery(q="nothing like it"),
        RunQuery(q="r0"),  # too short for a trigram: scanned
        RunQuery(q="ü"),
        RunQuery(q='r01 "z'),
        RunQuery(q="%"),
        RunQuery(q="of r01 zürich\nmodel"),
        RunQuery(q="output of r04\n"),  # a line break at a part's end: still inside the part
        RunQuery(q="broke\x1flookup"),  # the parts' separator: dropped, so no match spans parts
        RunQuery(q="call-r0"),  # in the ids part (FTS of the ids)
        RunQuery(since=T0 + timedelta(days=1)),
        RunQuery(until=T0 + timedelta(days=1)),
        RunQuery(statuses=("running", "queued", "awaiting_approval")),
        RunQuery(limit=2),
    ]
    for query in queries:
        got = await store.query_runs(query)  # type: ignore[attr-defined]
        assert got == select(rows.values(), query), query
    seen: list[str] = []
    cursor: Cursor | None = None
    while True:
        page = await store.query_runs(RunQuery(limit=3, cursor=cursor))  # type: ignore[attr-defined]
        seen += [row.run_id for row in page]
        if len(page) < 3:
            break
        cursor = Cursor.after(page[-1])
    assert seen == [row.run_id for row in select(rows.values(), RunQuery(limit=100))]
    assert len(set(seen)) == len(RUNS)


async def test_dashboard_agrees_with_the_rows(store: EventStore) -> None:
    """Invariant: the store's dashboard query gives the figures computed in Python from the same
    rows: runs by status, cost, tokens, nearest-rank p50/p95 of ended runs, error rate."""
    rows = await _fill(store)
    since = T0 + timedelta(days=1)
    for agent in (None, "billing"):
        got = await store.dashboard(since, agent)  # type: ignore[attr-defined]
        want = day_rows(rows.values(), since, agent)
        assert [(d.agent, d.day, d.runs, d.by_status) for d in got] == [
            (d.agent, d.day, d.runs, d.by_status) for d in want
        ]
        for g, w in zip(got, want, strict=True):
            assert g.cost_usd == pytest.approx(w.cost_usd) and g.error_rate == pytest.approx(w.error_rate)
            assert (g.input_tokens, g.output_tokens, g.p50_duration_ms, g.p95_duration_ms) == (
                w.input_tokens,
                w.output_tokens,
                w.p50_duration_ms,
                w.p95_duration_ms,
            )
    assert {d.agent for d in await store.dashboard(since, "billing")} == {"billing"}  # type: ignore[attr-defined]


async def _fill_with_nul(store: EventStore) -> dict[str, RunRow]:
    """`_fill`'s runs and two more whose texts hold NUL: a version 1 run, failed, and its replay."""
    rows = await _fill(store)
    at = T0 + timedelta(days=2, hours=1)
    hi = (Message.user("hi\x00"),)
    started = RunStarted(agent="billing", input="pay\x00 3", messages=hi, version="v1")
    await _write(store, "rnul", [[started], [RunFailed(error="bad\x00byte")]], at)
    replay = RunStarted(agent="billing", input="again\x00", messages=hi, version="v1", replay_of="rnul")
    await _write(store, "rrep", [[replay], [RunCompleted(output="done\x00")]], at + timedelta(minutes=1))
    for run_id in ("rnul", "rrep"):
        row = RunRow.of(await store.load(run_id))
        assert row is not None
        rows[run_id] = row
    return rows


async def test_a_nul_in_a_runs_texts_never_breaks_a_listing(store: EventStore) -> None:
    """Invariant: a NUL in a run's input, output or error (a prompt, a tool's output) is kept in
    its row, and every listing, filter and the dashboard still answer as the reference does.
    PostgreSQL refuses to turn JSON's `\\u0000` into text; schema 4 parsed row bodies in SQL for
    the replay, version and cost filters, so one such run made every listing fail (the fuzzed
    server's `GET /v1/runs` answered 500 after a start whose input held a NUL)."""
    rows = await _fill_with_nul(store)
    assert (await store.run_row("rnul")).input_text == "pay\x00 3"  # type: ignore[attr-defined]
    for query in [
        RunQuery(limit=100),
        RunQuery(limit=100, replays=True),
        RunQuery(replay_of="rnul"),
        RunQuery(version="v1", replays=True),
        RunQuery(version=""),
        RunQuery(q="pay"),
        RunQuery(status="failed", agent="billing"),
    ]:
        assert await store.query_runs(query) == select(rows.values(), query), query  # type: ignore[attr-defined]
    assert [r.run_id for r in await store.query_runs(RunQuery(replay_of="rnul"))] == ["rrep"]  # type: ignore[attr-defined]
    since = T0 + timedelta(days=2)
    got = await store.dashboard(since, "billing")  # type: ignore[attr-defined]
    want = day_rows(rows.values(), since, "billing")
    assert [(d.day, d.runs, d.by_status) for d in got] == [(d.day, d.runs, d.by_status) for d in want]
    assert [d.cost_usd for d in got] == pytest.approx([d.cost_usd for d in want])


async def test_delete_run_drops_its_row(store: EventStore) -> None:
    """Invariant: retention removes the run from the index too."""
    await _fill(store)
    await store.delete_run("r03")
    assert await store.run_row("r03") is None  # type: ignore[attr-defined]
    assert "r03" not in {row.run_id for row in await store.query_runs(RunQuery(limit=100))}  # type: ignore[attr-defined]


async def test_a_second_store_on_the_same_journal_continues_the_row(tmp_path: Path) -> None:
    """Invariant: a store that did not write a run's last append (another process, a restart)
    advances its row from what is stored, not from its own memory of it."""
    first, second = SqliteStore(tmp_path / "two.db"), SqliteStore(tmp_path / "two.db")
    try:
        batches = _run("rx", "billing", "done", 0)
        events = [Event.of("rx", n, T0 + timedelta(seconds=n), b[0]) for n, b in enumerate(batches)]
        await first.append("rx", 0, events[:2])
        await second.append("rx", 2, events[2:3])  # second never saw rx
        await first.append("rx", 3, events[3:])  # first's memory of rx is one append behind
        assert await first.run_row("rx") == RunRow.of(events) == await second.run_row("rx")
    finally:
        await first.close()
        await second.close()


async def test_a_version_3_sqlite_file_is_indexed_in_place(tmp_path: Path) -> None:
    """Invariant: a file written before the index (user_version 3) gains it when opened, every
    run's row folded from its journal, once; its runs then list and append as any."""
    path = tmp_path / "v3.db"
    store = SqliteStore(path)
    rows = await _fill(store)
    await store.close()
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE run_index; PRAGMA user_version = 3;")
    conn.close()
    store = SqliteStore(path)
    try:
        assert await store.query_runs(RunQuery(limit=100)) == select(rows.values(), RunQuery(limit=100))
        assert [r.run_id for r in await store.query_runs(RunQuery(status="awaiting_approval"))] == ["r05", "r03"]
        resumed = [Event.of("r03", 3, T0 + timedelta(days=5), RunFailed(error="gave up"))]
        await store.append("r03", 3, resumed)
        assert (await store.run_row("r03")).status == "failed"  # type: ignore[union-attr]
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (VERSION,)
    finally:
        conn.close()


async def _as_schema_version(store: PostgresStore, version: int, statements: list[str]) -> PostgresStore:
    """`store`'s schema taken back to `version` by `statements` (`{s}`: the quoted schema); a
    reader is refused it (an upgrade is a writer's), and the writer that upgrades it is returned."""
    async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
        for statement in statements:
            await conn.execute(statement.format(s=f'"{store.schema}"'))
        await conn.execute(f"UPDATE \"{store.schema}\".meta SET value = %s WHERE name = 'schema_version'", (version,))
    reader = PostgresStore(PG_DSN, schema=store.schema, read_only=True)
    with pytest.raises(JournalError, match=f"version {version}"):
        await reader.list_runs()
    await reader.close()
    return PostgresStore(PG_DSN, schema=store.schema)


@pytest.mark.parametrize("store", [pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_version_4_postgres_schema_gains_its_filter_columns_in_place(store: EventStore) -> None:
    """Invariant: a schema 4 index (filters parsed out of bodies in SQL) gains the replay, version
    and cost columns when a writer opens it, filled from each row's body (NUL and all), and
    its listings answer as the reference; a reader before that is told to open it once."""
    assert isinstance(store, PostgresStore)
    rows = await _fill_with_nul(store)
    drops = [f"ALTER TABLE {{s}}.run_index DROP COLUMN {column}" for column in ("replay_of", "version", "cost_known")]
    reopened = await _as_schema_version(store, 4, drops)
    try:
        for query in [RunQuery(limit=100), RunQuery(replay_of="rnul"), RunQuery(version="v1", replays=True)]:
            assert await reopened.query_runs(query) == select(rows.values(), query), query
        since = T0 + timedelta(days=2)
        got, want = await reopened.dashboard(since), day_rows(rows.values(), since, None)
        assert [d.cost_usd for d in got] == pytest.approx([d.cost_usd for d in want])
        assert [(d.agent, d.day, d.by_status) for d in got] == [(d.agent, d.day, d.by_status) for d in want]
    finally:
        await reopened.close()


@pytest.mark.parametrize("store", [pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_version_2_postgres_schema_is_indexed_in_place(store: EventStore) -> None:
    """Invariant: a schema written before the index (version 2) gains it when a writer opens
    it, every run's row folded from its journal; a reader before that is told to open it once."""
    assert isinstance(store, PostgresStore)
    rows = await _fill(store)
    schema = store.schema
    reopened = await _as_schema_version(store, 2, ["DROP TABLE {s}.run_index"])
    try:
        got: Any = await reopened.query_runs(RunQuery(limit=100))
        assert got == select(rows.values(), RunQuery(limit=100))
        await reopened.append("r05", 3, [Event.of("r05", 3, T0 + timedelta(days=9), RunFailed(error="x"))])
        assert (await reopened.run_row("r05")).status == "failed"  # type: ignore[union-attr]
        async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
            found = await conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'run_index_by_text'", (schema,)
            )
            [(definition,)] = await found.fetchall()
            assert "gin_trgm_ops" in definition  # `q` is answered by a trigram index
    finally:
        await reopened.close()
