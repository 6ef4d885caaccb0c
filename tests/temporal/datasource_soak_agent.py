"""The agent the Temporal datasource soak's workers serve: `datasource_soak_agent:make`.

Each run makes `$SOAK_CALLS` calls of one async tool that inserts a row into the PostgreSQL table
`$SOAK_TABLE` of the datasource `$SOAK_URL` through `ctx.db`, in the transaction the worker's
`eudaimon.tool` activity commits with the call's completion record.

In a worker started with `SOAK_MARKS=1` the two windows a kill must land in are announced on
stdout and held `WINDOW_S`: `T <run> <call>` once the tool has inserted its row (inside its
transaction), `C <run> <call>` once the datasource has committed it (before the activity reports
to Temporal, so before `tool_completed` is journaled). The soak SIGKILLs the worker on those lines.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from eudaimon import Agent, Datasource, Message, ToolCall, ToolContext, tool
from eudaimon.datasources import _datasource
from eudaimon.models import ChatRequest, FunctionModel

WINDOW_S = 0.05


def mark(window: str, run_id: str, call_id: str) -> None:
    if os.environ.get("SOAK_MARKS") == "1":
        sys.stdout.write(f"{window} {run_id} {call_id}\n")
        sys.stdout.flush()


def _widen_the_commit_window() -> None:
    """After the datasource's commit, before the activity's answer: say so, and wait."""
    commit = _datasource.Datasource.commit
    if getattr(commit, "widened", False):
        return

    async def commit_then_pause(self: Any, conn: Any, run_id: str, call_id: str, *rest: Any) -> bool:
        committed = await commit(self, conn, run_id, call_id, *rest)
        if committed:
            mark("C", run_id, call_id)
            await asyncio.sleep(WINDOW_S)
        return committed

    commit_then_pause.widened = True  # type: ignore[attr-defined]
    _datasource.Datasource.commit = commit_then_pause  # type: ignore[method-assign]


if os.environ.get("SOAK_MARKS") == "1":
    _widen_the_commit_window()


@tool(datasource="shop")
async def insert(n: int, ctx: ToolContext) -> str:
    """Insert one row."""
    await ctx.db.execute(
        f"INSERT INTO {os.environ['SOAK_TABLE']} (run_id, n, call_key) VALUES (%s, %s, %s)",
        (ctx.run_id, n, ctx.idempotency_key),
    )
    mark("T", ctx.run_id, ctx.call_id)
    await asyncio.sleep(WINDOW_S)
    return f"inserted {n}"


def _plan(request: ChatRequest) -> Message | str:
    done = sum(1 for m in request.messages if m.role == "tool")
    if done >= int(os.environ.get("SOAK_CALLS", "3")):
        return f"done with {done} rows"
    return Message.assistant(tool_calls=[ToolCall(f"call_{done}", "insert", {"n": done})])


def make(*, store: Any = None, engine: Any = None) -> Agent:
    return Agent(
        FunctionModel(_plan),
        tools=[insert],
        store=store,
        engine=engine,
        name="soak-shop",
        memory=None,
        datasources={"shop": Datasource(os.environ["SOAK_URL"])},
    )
