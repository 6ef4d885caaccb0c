"""What a datasource tool call costs against a plain WRITE doing the same insert.

In this (fresh) process: one run of K steps on a SQLite journal (`synchronous=full`), each step
one call of a tool that inserts a row. Plain WRITE: the tool inserts and commits on its own
sqlite3 connection. Datasource: `@tool(datasource="shop")` inserts through `ctx.db`; eudaimon
adds the completion record to the same transaction and commits. Both into a separate SQLite
file (so the insert is the same work); with `EUDAIMON_TEST_PG_DSN` set, the same pair on
PostgreSQL (an async tool, psycopg). Reported: wall µs per step and the ratio.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import _harness as h

from eudaimon import ToolContext  # at module level: the tools' hints must resolve

ROUNDS = 3


async def one_run(kind: str, k: int, tmp: Path) -> float:
    from eudaimon import Agent, Datasource, Message, ToolCall, tool
    from eudaimon.models import ScriptedModel
    from eudaimon.stores.sqlite import SqliteStore

    pg = os.environ.get("EUDAIMON_TEST_PG_DSN")
    table = f"orders_{uuid.uuid4().hex[:8]}"
    data = tmp / f"shop-{uuid.uuid4().hex[:6]}.db"
    if kind.startswith("pg"):
        import psycopg

        assert pg is not None
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {table} (n INT, call_key TEXT)")
    else:
        with sqlite3.connect(data) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"CREATE TABLE {table} (n INT, call_key TEXT)")

    own_sqlite = sqlite3.connect(data, check_same_thread=False, isolation_level=None)
    own_pg: Any = None
    if kind == "pg-write":
        import psycopg

        own_pg = await psycopg.AsyncConnection.connect(pg, autocommit=True)  # type: ignore[arg-type]

    if kind == "sqlite-write":

        @tool(name="insert")
        def insert(n: int, ctx: ToolContext) -> str:
            """Insert."""
            own_sqlite.execute(f"INSERT INTO {table} VALUES (?, ?)", (n, ctx.idempotency_key))
            return "ok"
    elif kind == "sqlite-datasource":

        @tool(name="insert", datasource="shop")
        def insert(n: int, ctx: ToolContext) -> str:
            """Insert."""
            ctx.db.execute(f"INSERT INTO {table} VALUES (?, ?)", (n, ctx.idempotency_key))
            return "ok"
    elif kind == "pg-write":

        @tool(name="insert")
        async def insert(n: int, ctx: ToolContext) -> str:
            """Insert."""
            await own_pg.execute(f"INSERT INTO {table} VALUES (%s, %s)", (n, ctx.idempotency_key))
            return "ok"
    else:

        @tool(name="insert", datasource="shop")
        async def insert(n: int, ctx: ToolContext) -> str:
            """Insert."""
            await ctx.db.execute(f"INSERT INTO {table} VALUES (%s, %s)", (n, ctx.idempotency_key))
            return "ok"

    source = Datasource(pg if kind.startswith("pg") else f"sqlite:///{data}")  # type: ignore[arg-type]
    script: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", "insert", {"n": i})]) for i in range(k)
    ]
    store = SqliteStore(str(tmp / f"journal-{uuid.uuid4().hex[:6]}.db"), synchronous="full")
    agent = Agent(
        ScriptedModel([*script, "done"]),
        tools=[insert],
        store=store,
        memory=None,
        max_iterations=k + 2,
        datasources={"shop": source},
    )
    await agent.prompt("warm up")  # schema, connections, first-call costs
    agent = Agent(
        ScriptedModel([*script, "done"]),
        tools=[insert],
        store=store,
        memory=None,
        max_iterations=k + 2,
        datasources={"shop": source},
    )
    started = time.perf_counter()
    response = await agent.prompt("go")
    wall = time.perf_counter() - started
    if response.status != "completed":
        raise RuntimeError(f"run ended {response.status}")
    await store.close()
    await source.close()
    own_sqlite.close()
    if own_pg is not None:
        await own_pg.close()
    return wall / k * 1e6


def measure(quick: bool) -> dict[str, Any]:
    k = 30 if quick else 100
    kinds = ["sqlite-write", "sqlite-datasource"]
    if os.environ.get("EUDAIMON_TEST_PG_DSN"):
        kinds += ["pg-write", "pg-datasource"]
    figures: dict[str, Any] = {"K": k}
    with h.scratch("datasource-") as tmp:
        for kind in kinds:
            samples = [h.run_on_thread(lambda kind=kind: one_run(kind, k, tmp)) for _ in range(ROUNDS)]
            figures[f"{kind} µs/step"] = h.median(samples)
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    out = [
        h.Target(
            "SQLite datasource step ≤ 2 × plain WRITE step",
            f["sqlite-datasource µs/step"] / f["sqlite-write µs/step"],
            2.0,
            f"{f['sqlite-datasource µs/step']:.0f} µs ÷ {f['sqlite-write µs/step']:.0f} µs",
        )
    ]
    if "pg-datasource µs/step" in f:
        out.append(
            h.Target(
                "PostgreSQL datasource step ≤ 2 × plain WRITE step",
                f["pg-datasource µs/step"] / f["pg-write µs/step"],
                2.0,
                f"{f['pg-datasource µs/step']:.0f} µs ÷ {f['pg-write µs/step']:.0f} µs",
            )
        )
    return out
