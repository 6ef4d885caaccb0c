"""The agent of the datasource fault tests: `datasource_fault_agent:make`, on a fleet or locally.

Each run makes `$FAULT_CALLS` calls of one async tool that inserts a row into the PostgreSQL
table `$FAULT_TABLE` of the datasource `$FAULT_URL` through `ctx.db`. The first time each call
runs, the transaction's connection dies as the database ends it (`pg_terminate_backend` from
another session: what a server restart, a failover or a killed backend does), with
`$FAULT_WHEN=after_insert` once the tool has inserted its row (the tool does not raise;
eudaimon's commit finds the connection gone), with `before_insert` before it (the tool's own
statement fails on a connection that was dead when it got it). The scripted model, like the
soak's, counts every tool result, error results too, so a call answered as an error would let
the run complete a row short.
"""

from __future__ import annotations

import os
from typing import Any

import psycopg

from eudaimon import Agent, Datasource, Message, ToolCall, ToolContext, tool
from eudaimon.models import ChatRequest, FunctionModel

OPENED: list[Datasource] = []
"""The datasources `make` built, for the test to close (an agent leaves its datasources open)."""
SEVERED: set[tuple[str, str]] = set()
"""The calls whose connection was ended once already: each is ended on its first try only."""


async def _sever(ctx: ToolContext) -> None:
    """End the call's connection from another session, the first time the call runs (with
    `$FAULT_UNTIL_ATTEMPT`, every time it runs at an attempt below that: a datasource down)."""
    until = int(os.environ.get("FAULT_UNTIL_ATTEMPT", "0"))
    if ctx.attempt >= until and (ctx.run_id, ctx.call_id) in SEVERED:
        return
    SEVERED.add((ctx.run_id, ctx.call_id))
    pid = ctx.db.info.backend_pid
    async with await psycopg.AsyncConnection.connect(os.environ["FAULT_URL"], autocommit=True) as other:
        await other.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))  # returns once it is gone


@tool(datasource="shop")
async def insert(n: int, ctx: ToolContext) -> str:
    """Insert one row."""
    if os.environ.get("FAULT_WHEN") == "before_insert":
        await _sever(ctx)  # a connection found dead when first used (a server restarted meanwhile)
    await ctx.db.execute(
        f"INSERT INTO {os.environ['FAULT_TABLE']} (run_id, n, call_key) VALUES (%s, %s, %s)",
        (ctx.run_id, n, ctx.idempotency_key),
    )
    if os.environ.get("FAULT_WHEN") == "after_insert":
        await _sever(ctx)  # the tool is done: eudaimon's commit finds the connection gone
    return f"inserted {n}"


def _plan(request: ChatRequest) -> Message | str:
    done = sum(1 for m in request.messages if m.role == "tool")
    if done >= int(os.environ.get("FAULT_CALLS", "2")):
        return f"done with {done} rows"
    return Message.assistant(tool_calls=[ToolCall(f"call_{done}", "insert", {"n": done})])


def make(*, store: Any = None, engine: Any = None) -> Agent:
    OPENED.append(Datasource(os.environ["FAULT_URL"]))
    return Agent(
        FunctionModel(_plan),
        tools=[insert],
        store=store,
        engine=engine,
        name="fault-shop",
        memory=None,
        datasources={"shop": OPENED[-1]},
    )


async def close_all() -> None:
    """Close the connections every datasource `make` built kept for later calls."""
    while OPENED:
        await OPENED.pop().close()
