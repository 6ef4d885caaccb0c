"""Stored journals keep each long text and each history message once (`eudaimon.stores.packing`).

Invariants: events read back exactly as appended; a thread's storage grows with what its turns
add, not with the history each `run_started` resends; deleting a run frees exactly what no
other run still reaches, even while other runs are being appended; a refused append leaves
nothing behind; a row naming a text the store lacks is a clear error, never a guess. Each holds
for SQLite and for PostgreSQL (`PACKED`); the tables are counted with SQL in each.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from eudaimon.core.errors import ConcurrencyConflict, CorruptEvent
from eudaimon.core.events import (
    Event,
    EventData,
    ModelCalled,
    RunCompleted,
    RunStarted,
    ToolCompleted,
    ToolReconciled,
)
from eudaimon.core.messages import Message, ToolCall
from eudaimon.stores import EventStore
from eudaimon.stores.packing import TEXT_MIN
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

LONG = "x" * TEXT_MIN
PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
PACKED = pytest.mark.parametrize(
    "store",
    [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)],
    indirect=True,
)
"""The conftest `store` fixture, over the stores that pack: an empty SqliteStore or PostgresStore."""


def _turn_payloads(n: int, history: list[Message]) -> tuple[list[EventData], list[Message]]:
    """One turn of a thread, as the runtime writes it: the history resent, a 4 KB tool output, a
    2 KB answer; returns the payloads and the history the next turn resends."""
    question = Message.user(f"question {n}", id=f"q{n}")
    call = Message.assistant(tool_calls=[ToolCall(f"c{n}", "fetch", {"n": n})], id=f"a{n}")
    output = f"record {n} " + "r" * 4096
    answer = f"answer {n} " + "a" * 2048
    result = Message.tool(f"c{n}", output, id=f"t{n}")
    final = Message.assistant(answer, id=f"f{n}")
    payloads: list[EventData] = [
        RunStarted(agent="a", input=question.content, messages=(*history, question), thread_id="t"),
        ModelCalled(step=1, request_id="r1", message=call),
        ToolCompleted(call_id=f"c{n}", tool="fetch", output=output),
        ModelCalled(step=2, request_id="r2", message=final),
        RunCompleted(output=answer),
    ]
    return payloads, [*history, question, call, result, final]


async def _write_thread(store: EventStore, samples: Any, turns: int) -> list[list[Event]]:
    history: list[Message] = [Message.system("you are careful", id="sys")]
    runs: list[list[Event]] = []
    for n in range(turns):
        payloads, history = _turn_payloads(n, history)
        events = samples.make_events(f"run-{n}", payloads)
        await store.append(f"run-{n}", 0, events)
        runs.append(events)
    return runs


def _sql(store: EventStore, sql: str) -> list[tuple[Any, ...]]:
    """Run `sql` in the store's own database (for PostgreSQL, with its schema as search path)."""
    if isinstance(store, SqliteStore):
        conn = sqlite3.connect(store.path)
        try:
            with conn:
                return conn.execute(sql).fetchall()
        finally:
            conn.close()
    assert isinstance(store, PostgresStore)
    with psycopg.connect(PG_DSN, autocommit=True) as pg:
        pg.execute(f'SET search_path TO "{store.schema}"')
        cursor = pg.execute(sql)
        return cursor.fetchall() if cursor.description else []


def _count(store: EventStore, sql: str) -> int:
    return int(_sql(store, sql)[0][0] or 0)


def _another(store: EventStore) -> EventStore:
    """A second store on the same journal: another process, another machine."""
    if isinstance(store, SqliteStore):
        return SqliteStore(store.path)
    assert isinstance(store, PostgresStore)
    return PostgresStore(PG_DSN, schema=store.schema)


def _assert_empty(store: EventStore) -> None:
    for table in ("texts", "messages", "message_refs", "events", "run_index"):
        assert _count(store, f"SELECT COUNT(*) FROM {table}") == 0, table


async def test_long_texts_and_histories_read_back_exactly(store: EventStore, samples: Any) -> None:
    """Invariant: packing is invisible; NUL, unicode and lone surrogates survive in long texts."""
    odd = LONG + "\x00 ünïcode ✓ \ud800 end"
    payloads: list[EventData] = [
        RunStarted(
            agent="a",
            input="hi",
            messages=(Message.system(odd, id="s"), Message.user("hi", id="u"), Message.tool("c0", LONG, id="t")),
        ),
        ModelCalled(step=1, request_id="r", message=Message.assistant(odd, [ToolCall("c1", "f", {"k": odd})])),
        ToolCompleted(call_id="c1", tool="f", output=odd, is_error=True),
        ToolReconciled(call_id="c1", output=None, retry=True),
        ToolReconciled(call_id="c1", output=LONG + "!"),
        RunCompleted(output=odd, structured={"text": odd}),
    ]
    events = samples.make_events("run-1", payloads)
    await store.append("run-1", 0, events[:2])
    await store.append("run-1", 2, events[2:])
    assert await store.load("run-1") == events
    assert await store.load("run-1", after_seq=2) == events[3:]


async def test_short_payloads_read_back_exactly(store: EventStore, samples: Any) -> None:
    """Invariant: events too short to store anything apart are written whole by pydantic's JSON
    encoder; NUL and text outside ASCII survive it, and a lone surrogate (which UTF-8 cannot
    encode) survives the escaping encoder the store falls back to."""
    odd = "\x00 ünïcode ✓ \U0001f600"
    payloads: list[EventData] = [
        RunStarted(agent="a", input=odd, messages=()),
        ModelCalled(step=1, request_id="r", message=Message.assistant(odd, [ToolCall("c1", "f", {"k": odd})])),
        ToolCompleted(call_id="c1", tool="f", output="lone \ud800 surrogate"),
        RunCompleted(output=odd),
    ]
    events = samples.make_events("run-short", payloads)
    await store.append("run-short", 0, events[:2])
    await store.append("run-short", 2, events[2:])
    assert await store.load("run-short") == events


@PACKED
async def test_a_thread_stores_each_text_and_message_once(store: EventStore, samples: Any) -> None:
    """Invariant: resending a history costs a few numbers, not the history; storage is linear."""
    turns = 12
    runs = await _write_thread(store, samples, turns)
    for events in runs:
        assert await store.load(events[0].run_id) == events
    # Per turn: the tool output and the answer (run_completed shares the answer's text).
    assert _count(store, "SELECT COUNT(*) FROM texts WHERE digest IS NOT NULL") == 2 * turns
    # Per turn: question, call, result, answer; plus the system message, once.
    assert _count(store, "SELECT COUNT(*) FROM messages") == 4 * (turns - 1) + 1 + 1
    started = _count(store, "SELECT MAX(LENGTH(payload)) FROM events WHERE type = 'run_started'")
    first = _count(store, "SELECT LENGTH(payload) FROM events WHERE type = 'run_started' AND run_id = 'run-0'")
    assert started <= first + 8, "a later run_started must not grow with its history"


@PACKED
async def test_deleting_runs_frees_only_what_no_other_run_reaches(store: EventStore, samples: Any) -> None:
    runs = await _write_thread(store, samples, 4)
    await store.delete_run("run-3")  # the newest: its own turn's messages go with it
    assert _count(store, "SELECT COUNT(*) FROM messages") == 4 * 2 + 1 + 1
    for events in runs[:3]:
        assert await store.load(events[0].run_id) == events
    await store.delete_run("run-0")  # the oldest: everything it had, the others still reach
    for events in runs[1:3]:
        assert await store.load(events[0].run_id) == events
    await store.delete_run("run-1")
    await store.delete_run("run-2")
    _assert_empty(store)


@PACKED
async def test_a_text_the_store_lacks_is_a_corrupt_event_naming_run_and_seq(store: EventStore, samples: Any) -> None:
    runs = await _write_thread(store, samples, 1)
    _sql(store, "DELETE FROM texts")
    with pytest.raises(CorruptEvent) as caught:
        await store.load(runs[0][0].run_id)
    assert "run run-0 seq 2" in str(caught.value)
    assert "missing from the store" in str(caught.value)


async def test_a_version_1_file_reads_its_inline_rows_and_takes_new_ones(tmp_path: Path, samples: Any) -> None:
    """Invariant: journals written before packing stay readable and writable in place."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL,
            payload TEXT NOT NULL, PRIMARY KEY (run_id, seq));
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, thread_id TEXT, created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL, next_seq INTEGER NOT NULL, last_type TEXT NOT NULL);
        CREATE TABLE leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
        CREATE TABLE snapshots (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL);
        PRAGMA user_version = 1;
        """
    )
    inline = (
        '{"agent":"a","input":"hi","messages":[{"role":"user","content":"' + LONG + '","id":"u",'
        '"tool_calls":[],"tool_call_id":null,"is_error":false}],"thread_id":null}'
    )
    at = samples.T0.isoformat()
    conn.execute("INSERT INTO events VALUES ('old', 0, ?, 'run_started', ?)", (at, inline))
    conn.execute("INSERT INTO runs VALUES ('old', 'a', NULL, ?, ?, 1, 'run_started')", (at, at))
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    try:
        [started] = await store.load("old")
        assert isinstance(started.data, RunStarted)
        assert started.data.messages == (Message.user(LONG, id="u"),)
        more = samples.make_events("old", [RunCompleted(output=LONG)], start=1)
        await store.append("old", 1, more)
        assert await store.load("old") == [started, *more]
        assert _count(store, "PRAGMA user_version") == 5
    finally:
        await store.close()


@PACKED
async def test_a_history_that_repeats_itself_keeps_every_message_alive(store: EventStore, samples: Any) -> None:
    one, two = Message.user("one", id="1"), Message.user("two", id="2")
    first = samples.make_events("first", [RunStarted(agent="a", input="", messages=(one, two))])
    repeats = samples.make_events("repeats", [RunStarted(agent="a", input="", messages=(one, one, two, one))])
    await store.append("first", 0, first)
    await store.append("repeats", 0, repeats)
    await store.delete_run("first")
    assert await store.load("repeats") == repeats


@PACKED
async def test_a_refused_append_with_content_leaves_nothing_behind(store: EventStore, samples: Any) -> None:
    """Invariant: of two writers starting one run at once, each with history messages and long
    texts of its own and some shared, one wins and the other writes nothing: only the winner's
    content is stored and counted, so deleting the runs leaves the content tables empty."""
    rival = _another(store)
    shared = (Message.system("shared " + LONG, id="sys"), Message.user("hi", id="u"))
    rounds = 3
    try:
        await asyncio.gather(store.list_runs(), rival.list_runs())  # both ready: they race from the start
        for n in range(rounds):
            run = f"run-{n}"
            tries = [
                samples.make_events(
                    run,
                    [
                        RunStarted(agent=w, input="hi", messages=(*shared, Message.user(f"{run} {w} {LONG}", id=w))),
                        ToolCompleted(call_id="c", tool="t", output=f"{run} {w} output {LONG}"),
                    ],
                )
                for w in ("w0", "w1")
            ]
            outcomes = await asyncio.gather(
                store.append(run, 0, tries[0]), rival.append(run, 0, tries[1]), return_exceptions=True
            )
            assert outcomes.count(None) == 1, outcomes
            assert any(isinstance(o, ConcurrencyConflict) for o in outcomes), outcomes
            winner = tries[outcomes.index(None)]
            assert await store.load(run) == winner
        # The shared system text once (its message holds it); per run the winner's message text
        # and its tool output. Messages: the two shared, and the winner's own per run.
        assert _count(store, "SELECT COUNT(*) FROM texts") == 1 + 2 * rounds
        assert _count(store, "SELECT SUM(refs) FROM texts") == 1 + 2 * rounds
        assert _count(store, "SELECT COUNT(*) FROM messages") == 2 + rounds
        for n in range(rounds):
            await rival.delete_run(f"run-{n}")
        _assert_empty(store)
    finally:
        await rival.close()


@PACKED
async def test_runs_appended_while_others_are_deleted_keep_their_content(store: EventStore, samples: Any) -> None:
    """Invariant: deleting a run while the next turn of its thread is being appended (naming the
    same messages and texts) frees nothing the new run names; the last delete frees everything."""
    deleter = _another(store)
    history: list[Message] = [Message.system("you are careful " + LONG, id="sys")]
    turns = 6
    try:
        for n in range(turns):
            payloads, history = _turn_payloads(n, history)
            events = samples.make_events(f"run-{n}", payloads)
            work = [store.append(f"run-{n}", 0, events), *([deleter.delete_run(f"run-{n - 1}")] if n else [])]
            await asyncio.gather(*work)
            assert await store.load(f"run-{n}") == events
        await store.delete_run(f"run-{turns - 1}")
        _assert_empty(store)
    finally:
        await deleter.close()


@pytest.mark.parametrize("store", [pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)], indirect=True)
async def test_a_version_1_postgres_schema_is_upgraded_in_place(store: EventStore, samples: Any) -> None:
    """Invariant: a PostgreSQL journal written before packing gains the content tables on first
    use, keeps reading its inline rows and takes packed ones beside them."""
    assert isinstance(store, PostgresStore)
    s = f'"{store.schema}"'
    with psycopg.connect(PG_DSN, autocommit=True) as conn:  # before the store's first use
        for statement in _POSTGRES_V1_DDL:
            conn.execute(statement.format(s=s))
        inline = (
            '{"agent":"a","input":"hi","messages":[{"role":"user","content":"' + LONG + '","id":"u",'
            '"tool_calls":[],"tool_call_id":null,"is_error":false}],"thread_id":null}'
        )
        conn.execute(
            f"INSERT INTO {s}.events VALUES ('old', 0, %s, interval '0', 'run_started', %s)", (samples.T0, inline)
        )
        conn.execute(
            f"INSERT INTO {s}.runs (run_id, agent, thread_id, created_at, updated_at, next_seq, last_type)"
            " VALUES ('old', 'a', NULL, %s, %s, 1, 'run_started')",
            (samples.T0, samples.T0),
        )
    [started] = await store.load("old")
    assert isinstance(started.data, RunStarted)
    assert started.data.messages == (Message.user(LONG, id="u"),)
    more = samples.make_events(
        "old",
        [ModelCalled(step=1, request_id="r", message=Message.assistant(LONG)), RunCompleted(output=LONG)],
        start=1,
    )
    await store.append("old", 1, more)
    assert await store.load("old") == [started, *more]
    runs = await _write_thread(store, samples, 2)
    assert await store.load("run-1") == runs[1]
    assert _sql(store, "SELECT value FROM meta WHERE name = 'schema_version'") == [(4,)]
    assert _sql(store, "SELECT status FROM run_index WHERE run_id = 'old'") == [("completed",)]
    for run in ("old", "run-0", "run-1"):
        await store.delete_run(run)
    _assert_empty(store)


_POSTGRES_V1_DDL = (
    "CREATE SCHEMA IF NOT EXISTS {s}",
    "CREATE TABLE {s}.meta (name text PRIMARY KEY, value bigint NOT NULL)",
    """CREATE TABLE {s}.events (run_id text NOT NULL, seq bigint NOT NULL, at timestamptz NOT NULL,
        at_offset interval, type text NOT NULL, payload text NOT NULL, PRIMARY KEY (run_id, seq))""",
    """CREATE TABLE {s}.runs (run_id text PRIMARY KEY, run_no bigint GENERATED ALWAYS AS IDENTITY,
        agent text NOT NULL, thread_id text, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        next_seq bigint NOT NULL, last_type text NOT NULL)""",
    "CREATE INDEX runs_by_updated_at ON {s}.runs (updated_at DESC, run_no)",
    "CREATE INDEX runs_by_thread ON {s}.runs (thread_id, updated_at DESC, run_no)",
    "CREATE TABLE {s}.leases (name text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)",
    "CREATE TABLE {s}.snapshots (key text PRIMARY KEY, version bigint NOT NULL, data text NOT NULL)",
    "INSERT INTO {s}.meta (name, value) VALUES ('schema_version', 1)",
)
"""The PostgreSQL schema as version 1 made it (before texts and messages were stored once)."""
