"""`@tool(datasource=…)`: the tool writes through `ctx.db` inside a transaction that eudaimon
commits with the call's completion record, then journals `tool_completed`; a tool that raises
rolls back; recovery reads the datasource rather than asking a human.

A crash is a BaseException escaping the tool or the journal (as in tests/durability); the
subprocess soak (test_soak_datasource_kill9.py) does the real kill -9.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _datasource_support import PG_DSN, needs_pg, orders_table

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.core.state import Status
from eudaimon.datasources import COMPLETIONS_TABLE, Datasource
from eudaimon.errors import ConfigurationError
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs."""


def _order(i: int = 0) -> Message:
    return Message.assistant(tool_calls=[ToolCall(f"call_{i}", "place", {"item": f"tea-{i}"})])


def _tools(table: str, *, crash_after: list[bool], fail: bool = False) -> list[Any]:
    async def place_async(item: str, ctx: ToolContext) -> str:
        """Place an order."""
        await ctx.db.execute(f"INSERT INTO {table} (item, call_key) VALUES (%s, %s)", (item, ctx.idempotency_key))
        if fail:
            raise RuntimeError("out of stock")
        if crash_after and crash_after.pop():
            raise Crash
        return f"ordered {item}"

    def place_sync(item: str, ctx: ToolContext) -> str:
        """Place an order."""
        mark = "?" if isinstance(ctx.db, sqlite3.Connection) else "%s"
        ctx.db.execute(f"INSERT INTO {table} (item, call_key) VALUES ({mark}, {mark})", (item, ctx.idempotency_key))
        if fail:
            raise RuntimeError("out of stock")
        if crash_after and crash_after.pop():
            raise Crash
        return f"ordered {item}"

    return [place_async, place_sync]


@pytest.fixture(params=["sqlite", "postgresql-async", "postgresql-sync"])
async def shop(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Datasource, str, str]]:
    """(datasource, orders table, "async" | "sync")."""
    kind: str = request.param
    table = orders_table()
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'shop.db'}"
        with sqlite3.connect(tmp_path / "shop.db") as conn:
            conn.execute(f"CREATE TABLE {table} (item TEXT, call_key TEXT)")
        mode = "sync"
    else:
        if PG_DSN is None:
            pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
        import psycopg

        url = PG_DSN
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {table} (item TEXT, call_key TEXT)")
        mode = kind.split("-")[1]
    source = Datasource(url)
    yield source, table, mode
    await source.close()


def _agent(store: MemoryStore, source: Datasource, table: str, mode: str, script: list[Any], **kw: Any) -> Agent:
    fn = _tools(table, **kw)[0 if mode == "async" else 1]
    place = tool(name="place", datasource="shop")(fn)
    return Agent(ScriptedModel(script), tools=[place], store=store, datasources={"shop": source})


async def _rows(source: Datasource, table: str) -> list[tuple[Any, ...]]:
    if source.kind == "sqlite":
        with sqlite3.connect(source.url[len("sqlite:///") :]) as conn:
            return conn.execute(f"SELECT item, call_key FROM {table}").fetchall()
    import psycopg

    assert PG_DSN is not None
    with psycopg.connect(PG_DSN) as conn:
        return conn.execute(f"SELECT item, call_key FROM {table}").fetchall()


async def _records(source: Datasource, run_id: str) -> int:
    if source.kind == "sqlite":
        with sqlite3.connect(source.url[len("sqlite:///") :]) as conn:
            sql = f"SELECT count(*) FROM {COMPLETIONS_TABLE} WHERE run_id = ?"
            return int(conn.execute(sql, (run_id,)).fetchone()[0])
    import psycopg

    assert PG_DSN is not None
    with psycopg.connect(PG_DSN) as conn:
        row = conn.execute(f"SELECT count(*) FROM {COMPLETIONS_TABLE} WHERE run_id = %s", (run_id,)).fetchone()
        assert row is not None
        return int(row[0])


async def test_the_tool_writes_in_a_transaction_committed_with_its_completion_record(shop: Any) -> None:
    source, table, mode = shop
    store = MemoryStore()
    response = await _agent(store, source, table, mode, [_order(), "done"], crash_after=[]).prompt("buy tea")
    assert response.output == "done"
    assert [r[0] for r in await _rows(source, table)] == ["tea-0"]
    assert await _records(source, response.run_id) == 1
    completed = [e.data for e in await store.load(response.run_id) if e.type == "tool_completed"]
    assert completed[0].datasource == "shop" and not completed[0].recovered  # type: ignore[union-attr]
    started = [e.data for e in await store.load(response.run_id) if e.type == "tool_started"]
    assert started[0].datasource == "shop" and started[0].effect == "write"  # type: ignore[union-attr]


async def test_a_tool_that_raises_rolls_back_and_nothing_lands(shop: Any) -> None:
    source, table, mode = shop
    store = MemoryStore()
    response = await _agent(store, source, table, mode, [_order(), "done"], crash_after=[], fail=True).prompt("x")
    assert response.output == "done"
    assert await _rows(source, table) == []
    assert await _records(source, response.run_id) == 0
    completed = [e.data for e in await store.load(response.run_id) if e.type == "tool_completed"]
    assert completed[0].is_error and completed[0].datasource is None  # type: ignore[union-attr]


async def test_a_crash_after_the_commit_is_recovered_from_the_datasource_without_a_rerun(shop: Any) -> None:
    """Killed between the datasource's commit and the journal's: recovery finds the record,
    journals `tool_completed` from it, and the tool does not run again (one row)."""
    source, table, mode = shop
    store = MemoryStore()
    agent = _agent(store, source, table, mode, [_order(), "done"], crash_after=[])
    journal_append = store.append

    async def dies_after_the_commit(run_id: str, before: int, events: Any, *a: Any, **k: Any) -> Any:
        if any(getattr(e, "type", "") == "tool_completed" for e in events):
            raise Crash
        return await journal_append(run_id, before, events, *a, **k)

    store.append = dies_after_the_commit  # type: ignore[method-assign]
    with pytest.raises(Crash):
        await agent.prompt("buy tea")
    store.append = journal_append  # type: ignore[method-assign]
    run_id = (await store.list_runs())[0].run_id
    assert await _records(source, run_id) == 1
    resumed = await _agent(store, source, table, mode, [_order(), "done"], crash_after=[]).resume(run_id)
    assert resumed.status is Status.COMPLETED
    assert [r[0] for r in await _rows(source, table)] == ["tea-0"]
    completed = [e.data for e in await store.load(run_id) if e.type == "tool_completed"]
    assert completed[-1].recovered and completed[-1].output == "ordered tea-0"  # type: ignore[union-attr]
    assert not [e for e in await store.load(run_id) if e.type == "tool_outcome_unknown"]


async def test_a_crash_inside_the_transaction_runs_the_call_again_with_the_same_key(shop: Any) -> None:
    source, table, mode = shop
    store = MemoryStore()
    with pytest.raises(Crash):
        await _agent(store, source, table, mode, [_order(), "done"], crash_after=[True]).prompt("buy tea")
    run_id = (await store.list_runs())[0].run_id
    assert await _rows(source, table) == []  # the transaction never committed
    resumed = await _agent(store, source, table, mode, [_order(), "done"], crash_after=[]).resume(run_id)
    assert resumed.status is Status.COMPLETED
    rows = await _rows(source, table)
    assert len(rows) == 1
    keys = {e.data.idempotency_key for e in await store.load(run_id) if e.type == "tool_started"}  # type: ignore[union-attr]
    assert keys == {rows[0][1]}
    assert not [e for e in await store.load(run_id) if e.type == "tool_outcome_unknown"]


async def test_an_unknown_datasource_name_is_refused_when_the_agent_is_built(tmp_path: Path) -> None:
    @tool(datasource="shop")
    def place(item: str, ctx: ToolContext) -> str:
        """Place."""
        return item

    with pytest.raises(ConfigurationError, match="datasource 'shop'"):
        Agent(ScriptedModel(["x"]), tools=[place])
    with pytest.raises(ConfigurationError, match="effect"):
        tool(datasource="shop", effect="irreversible")(place.function)


@needs_pg
def test_the_password_never_shows() -> None:
    source = Datasource("postgresql://shop:hunter2@127.0.0.1:1/shop")
    assert "hunter2" not in repr(source) and "hunter2" not in source.url
    error = source.error("connecting", OSError("password authentication failed for hunter2"))
    assert "hunter2" not in str(error)


async def test_an_unreachable_datasource_is_an_error_result_without_its_password(tmp_path: Path) -> None:
    if PG_DSN is None:
        pytest.skip("EUDAIMON_TEST_PG_DSN is unset")

    @tool(datasource="shop")
    async def place(item: str, ctx: ToolContext) -> str:
        """Place."""
        return item

    store = MemoryStore()
    source = Datasource("postgresql://shop:hunter2@127.0.0.1:1/shop")
    agent = Agent(ScriptedModel([_order(), "done"]), tools=[place], store=store, datasources={"shop": source})
    response = await agent.prompt("x")
    rows = [e.data for e in await store.load(response.run_id)]
    text = repr(rows)
    assert "hunter2" not in text and "**********" in text


async def test_a_failed_attempt_rolls_back_and_the_retry_policy_runs_it_again(tmp_path: Path) -> None:
    """A datasource tool is retried by `tool_retry_policy` (its failed attempt left nothing):
    the first attempt's insert is rolled back, the second's lands, one row."""
    from eudaimon import ToolRetryPolicy

    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (item TEXT, attempt INT)")
    attempts: list[int] = []

    @tool(datasource="shop")
    def place(item: str, ctx: ToolContext) -> str:
        """Place."""
        ctx.db.execute("INSERT INTO orders VALUES (?, ?)", (item, ctx.attempt))
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            raise RuntimeError("deadlock detected")
        return "ok"

    source = Datasource(f"sqlite:///{path}")
    agent = Agent(
        ScriptedModel([_order(), "done"]),
        tools=[place],
        datasources={"shop": source},
        tool_retry_policy=ToolRetryPolicy.exponential(3, initial_delay=0.01),
    )
    response = await agent.prompt("x")
    await source.close()
    assert response.output == "done" and attempts == [1, 2]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT item, attempt FROM orders").fetchall() == [("tea-0", 2)]


async def test_a_datasource_tool_that_needs_approval_commits_only_once_approved(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (item TEXT)")

    @tool(datasource="shop", requires_approval=True)
    def place(item: str, ctx: ToolContext) -> str:
        """Place."""
        ctx.db.execute("INSERT INTO orders VALUES (?)", (item,))
        return "ok"

    source = Datasource(f"sqlite:///{path}")
    store = MemoryStore()
    agent = Agent(ScriptedModel([_order(), "done"]), tools=[place], store=store, datasources={"shop": source})
    paused = await agent.prompt("x")
    assert paused.status == "awaiting_approval"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (0,)
    await agent.approve(paused.run_id, "call_0", by="ann")
    done = await agent.resume(paused.run_id)
    await source.close()
    assert done.status == "completed"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT item FROM orders").fetchall() == [("tea-0",)]


@needs_pg
def test_an_async_postgres_datasource_serves_prompts_on_different_event_loops() -> None:
    """`prompt_sync` runs each prompt on a loop of its own: a connection kept from the first
    loop is never handed to the second."""
    import psycopg

    assert PG_DSN is not None
    table = orders_table()
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (item TEXT, call_key TEXT)")
    source = Datasource(PG_DSN)
    for i in range(3):
        agent = _agent(MemoryStore(), source, table, "async", [_order(i), "done"], crash_after=[])
        assert agent.prompt_sync("x").output == "done"
    asyncio.run(source.close())
    with psycopg.connect(PG_DSN) as conn:
        assert sorted(r[0] for r in conn.execute(f"SELECT item FROM {table}").fetchall()) == ["tea-0", "tea-1", "tea-2"]
