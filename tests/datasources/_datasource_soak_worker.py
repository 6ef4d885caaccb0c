"""One incarnation of the datasource soak: a fresh process driving some runs at once, each a
few calls of a tool that inserts a row into a datasource table.

Usage: python _datasource_soak_worker.py JOURNAL_SPEC DATASOURCE_URL TABLE CALLS RUN_ID[,RUN_ID…]

It prints `ready` once the store is open; `T <run> <call>` when the tool has inserted its row and
sleeps inside its transaction; `C <run> <call>` when eudaimon has committed the call's
transaction and sleeps before journaling `tool_completed`; the parent SIGKILLs on those lines to
land kills in those two windows. At the end it prints `done {run: status}`.
With `EUDAIMON_DS_STOP=T` (or `C`) the process stops itself (SIGSTOP, after printing `Z`) the
first time it reaches that window; the parent sends SIGCONT after another worker took over.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from _proc_support import open_store, stdout_emit

from eudaimon import Agent, Datasource, Message, ToolCall, ToolContext, tool
from eudaimon.core.errors import JournalError, RunNotFound
from eudaimon.datasources import _datasource
from eudaimon.models import ChatRequest, FunctionModel

WINDOW_S = 0.05
"""How long the worker sleeps inside each window, so a kill sent on its line lands in it."""
_STOP_AT = [os.environ.get("EUDAIMON_DS_STOP", "")]


def mark(window: str, run_id: str, call_id: str) -> None:
    """Say which window this process is in; stop here if asked to (once)."""
    stdout_emit(window, run_id, call_id)
    if _STOP_AT[0] == window:
        _STOP_AT[0] = ""
        stdout_emit("Z", run_id, call_id)
        os.kill(os.getpid(), signal.SIGSTOP)


def _widen_the_commit_window() -> None:
    """After the datasource commit, before `tool_completed` is journaled: say so, and wait."""
    commit = _datasource.Datasource.commit

    async def commit_then_pause(self: Any, conn: Any, run_id: str, call_id: str, *rest: Any) -> bool:
        committed = await commit(self, conn, run_id, call_id, *rest)
        if committed:
            mark("C", run_id, call_id)
            await asyncio.sleep(WINDOW_S)
        return committed

    _datasource.Datasource.commit = commit_then_pause  # type: ignore[method-assign]


def build(spec: str, url: str, table: str, calls: int) -> tuple[Any, Agent]:
    source = Datasource(url)
    if source.kind == "sqlite":

        @tool(name="insert", datasource="shop")
        def insert_sync(n: int, ctx: ToolContext) -> str:
            """Insert one row."""
            ctx.db.execute(
                f"INSERT INTO {table} (run_id, n, call_key) VALUES (?, ?, ?)", (ctx.run_id, n, ctx.idempotency_key)
            )
            mark("T", ctx.run_id, ctx.call_id)
            time.sleep(WINDOW_S)
            return f"inserted {n}"

        insert = insert_sync
    else:

        @tool(name="insert", datasource="shop")
        async def insert_async(n: int, ctx: ToolContext) -> str:
            """Insert one row."""
            await ctx.db.execute(
                f"INSERT INTO {table} (run_id, n, call_key) VALUES (%s, %s, %s)", (ctx.run_id, n, ctx.idempotency_key)
            )
            mark("T", ctx.run_id, ctx.call_id)
            await asyncio.sleep(WINDOW_S)
            return f"inserted {n}"

        insert = insert_async

    def plan(request: ChatRequest) -> Message | str:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done >= calls:
            return f"done with {done} rows"
        return Message.assistant(tool_calls=[ToolCall(f"call_{done}", "insert", {"n": done})])

    store = open_store(spec)
    agent = Agent(FunctionModel(plan), tools=[insert], store=store, memory=None, datasources={"shop": source})
    return store, agent


async def drive(agent: Agent, run_id: str) -> str:
    try:
        try:
            await agent.state(run_id)
        except RunNotFound:
            response = await agent.prompt(f"soak {run_id}", run_id=run_id)
        else:
            response = await agent.resume(run_id)
    except JournalError as exc:
        stdout_emit("E", run_id, type(exc).__name__, str(exc).replace("\n", " "))
        os._exit(3)
    except BaseException as exc:
        stdout_emit("X", run_id, type(exc).__name__, str(exc).replace("\n", " "))
        os._exit(4)
    return str(response.status)


async def main() -> None:
    spec, url, table, calls, runs = sys.argv[1:6]
    _widen_the_commit_window()
    store, agent = build(spec, url, table, int(calls))
    await store.list_runs(limit=1)
    stdout_emit("ready")
    run_ids = runs.split(",")
    statuses = await asyncio.gather(*(drive(agent, run_id) for run_id in run_ids))
    await store.close()
    stdout_emit("done", json.dumps(dict(zip(run_ids, statuses, strict=True))))


if __name__ == "__main__":
    asyncio.run(main())
