"""Per-step cost of a K-step tool loop on PostgresStore, against LangGraph's PostgresSaver on the
same server (and SqliteStore, MemoryStore).

One step is one model answer asking for one async READ tool, the tool's run, and the journal
appends around them. The model is scripted (eudaimon's `ScriptedModel`; for LangGraph a
`BaseChatModel` answering the same way inside `create_react_agent` with `AsyncPostgresSaver`),
so what is measured is each framework's own work plus its persistence. MemoryStore is the no-I/O
baseline. Every run is a new run on a thread of its own (a shared thread's memory would change
the work), and every run is checked: K tool calls executed, K tool results, the answer "done".

Commits per step are counted by the server, the same way for both: a statement trigger on every
table of the framework's schema records the id of each transaction that wrote, so the count is
the transactions that committed a write (reads and refused writes cost none). That pass is run
apart from the timed ones (the trigger costs time); eudaimon's own `commit_count` must agree.

    .venv/bin/python benchmarks/postgres_step.py [--steps 10,100] [--repeat 3]
        [--dsn postgresql://postgres@127.0.0.1:5432/postgres]   (default: $EUDAIMON_TEST_PG_DSN)
    benchmarks/.peers/bin/python benchmarks/postgres_step.py     # with LangGraph's PostgresSaver

LangGraph is measured when `langgraph` and `langgraph-checkpoint-postgres` import (the peers'
venv, `benchmarks/peers/setup.sh`, plus `pip install langgraph-checkpoint-postgres`); otherwise
its columns say so. SQLite runs with `synchronous=FULL` in a temporary directory; PostgreSQL in
throwaway schemas, dropped at the end. Each figure is the median of `--repeat` runs, after a
warm-up run that opens the pool and creates the schema.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.stores import EventStore, MemoryStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

DEFAULT_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
CALLS = {"n": 0}
"""Tool executions, both frameworks: each run must execute exactly K."""


@tool(effect="read")
async def lookup(i: int) -> str:
    """Look an item up."""
    CALLS["n"] += 1
    return f"item {i}"


def script(steps: int) -> list[Message | str]:
    calls: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"c{i}", "lookup", {"i": i})]) for i in range(steps)
    ]
    return [*calls, "done"]


async def one_run(store: EventStore, steps: int) -> tuple[float, int]:
    """Seconds for a run of `steps` tool steps, and the commits it cost (by the store's count)."""
    agent = Agent(ScriptedModel(script(steps)), tools=[lookup], store=store, max_iterations=steps + 1)
    before, calls = getattr(store, "commit_count", 0), CALLS["n"]
    started = time.perf_counter()
    response = await agent.prompt("go", thread_id=f"bench-{uuid.uuid4().hex}")
    elapsed = time.perf_counter() - started
    assert response.status == "completed" and response.iterations == steps + 1, response.status
    assert response.output == "done" and CALLS["n"] - calls == steps
    results = sum(1 for m in response.all_messages() if m.role == "tool")
    assert results == steps, results
    return elapsed, getattr(store, "commit_count", 0) - before


async def measure(make: Callable[[], EventStore], steps: int, repeat: int) -> tuple[float, float]:
    """Median µs per step and commits per step over `repeat` runs of `steps` steps, one store."""
    store = make()
    try:
        await one_run(store, 5)  # warm-up: pool, schema, imports
        timings, commits = [], []
        for _ in range(repeat):
            seconds, count = await one_run(store, steps)
            timings.append(seconds / steps * 1e6)
            commits.append(count / steps)
        return statistics.median(timings), statistics.median(commits)
    finally:
        await store.close()


# -- commits counted by the server -----------------------------------------------------------


def mark_commits(dsn: str, schema: str) -> None:
    """Make every write to `schema`'s tables record its transaction's id in `commit_marks`."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename <> 'commit_marks'", (schema,)
            )
        ]
        s = f'"{schema}"'
        conn.execute(f"CREATE TABLE IF NOT EXISTS {s}.commit_marks (xid xid8 PRIMARY KEY)")
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {s}.mark_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"INSERT INTO {s}.commit_marks VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; RETURN NULL; END $$"
        )
        for table in tables:
            conn.execute(
                f'CREATE OR REPLACE TRIGGER mark_commit AFTER INSERT OR UPDATE OR DELETE ON {s}."{table}" '
                f"FOR EACH STATEMENT EXECUTE FUNCTION {s}.mark_commit()"
            )


def commits_marked(dsn: str, schema: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{schema}".commit_marks').fetchone()
        conn.execute(f'DELETE FROM "{schema}".commit_marks')
    return int(row[0]) if row else 0


async def counted_commits(
    dsn: str, schema: str, run: Callable[[int], Awaitable[Any]], steps: int, warm: Callable[[], Awaitable[Any]]
) -> float:
    """Server-counted write transactions per step of one run of `steps` steps."""
    await warm()  # the schema exists, so its tables can carry the trigger
    mark_commits(dsn, schema)
    commits_marked(dsn, schema)
    await run(steps)
    return commits_marked(dsn, schema) / steps


async def eudaimon_pg_commits(dsn: str, schema: str, steps: int) -> tuple[float, float]:
    """(server-counted, store-counted) commits per step of one eudaimon run on PostgreSQL."""
    store = PostgresStore(dsn, schema=schema)
    own: list[int] = []

    async def run(k: int) -> None:
        own.append((await one_run(store, k))[1])

    try:
        server = await counted_commits(dsn, schema, run, steps, lambda: store.list_runs(limit=1))
    finally:
        await store.close()
    return server, own[0] / steps


# -- LangGraph with AsyncPostgresSaver -------------------------------------------------------


def langgraph_missing() -> str | None:
    try:
        import langgraph.checkpoint.postgres.aio
        import langgraph.prebuilt  # noqa: F401
    except ImportError as exc:
        return f"not installed ({exc.name}); run with benchmarks/.peers/bin/python"
    return None


class LangGraphLoop:
    """`create_react_agent` with a scripted chat model and `AsyncPostgresSaver` in `schema`."""

    def __init__(self, dsn: str, schema: str) -> None:
        self.dsn = dsn
        self.schema = schema
        self._saver_cm: Any = None
        self.saver: Any = None

    async def __aenter__(self) -> LangGraphLoop:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
        sep = "&" if "?" in self.dsn else "?"
        dsn = f"{self.dsn}{sep}options={quote(f'-csearch_path={self.schema}')}"
        self._saver_cm = AsyncPostgresSaver.from_conn_string(dsn)
        self.saver = await self._saver_cm.__aenter__()
        await self.saver.setup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._saver_cm.__aexit__(*exc)

    async def run(self, steps: int) -> float:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langgraph.prebuilt import create_react_agent

        warnings.filterwarnings("ignore", message=".*create_react_agent.*")  # moved in 1.0, still ships

        class Scripted(BaseChatModel):
            """Asks for `lookup(i)` until K results are in, then answers "done"."""

            k: int

            @property
            def _llm_type(self) -> str:
                return "scripted"

            def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
                return self

            def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
                raise NotImplementedError("async only")

            async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
                done = sum(1 for m in messages if isinstance(m, ToolMessage))
                if done < self.k:
                    call = {"name": "lookup", "args": {"i": done}, "id": f"c{done}", "type": "tool_call"}
                    message = AIMessage(content="", tool_calls=[call])
                else:
                    message = AIMessage(content="done")
                return ChatResult(generations=[ChatGeneration(message=message)])

        async def lookup_lg(i: int) -> str:
            """Look an item up."""
            CALLS["n"] += 1
            return f"item {i}"

        lookup_lg.__name__ = "lookup"
        agent = create_react_agent(Scripted(k=steps), [lookup_lg], checkpointer=self.saver)
        config = {"recursion_limit": 2 * steps + 5, "configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
        calls = CALLS["n"]
        started = time.perf_counter()
        state = await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
        elapsed = time.perf_counter() - started
        messages = state["messages"]
        assert messages[-1].content == "done" and CALLS["n"] - calls == steps
        assert sum(1 for m in messages if isinstance(m, ToolMessage)) == steps
        return elapsed


async def measure_langgraph(dsn: str, schema: str, steps: int, repeat: int) -> tuple[float, float]:
    """Median µs per step, and server-counted commits per step, of LangGraph on PostgreSQL."""
    async with LangGraphLoop(dsn, schema) as loop:
        await loop.run(5)
        timings = [await loop.run(steps) / steps * 1e6 for _ in range(repeat)]
        commits = await counted_commits(dsn, schema, loop.run, steps, lambda: asyncio.sleep(0))
    return statistics.median(timings), commits


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", default="10,100", help="comma-separated K values")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    args = parser.parse_args()
    sizes = [int(k) for k in args.steps.split(",")]
    tag = uuid.uuid4().hex[:12]
    schema, counted, lg_schema = f"eudaimon_bench_{tag}", f"eudaimon_bench_{tag}_n", f"eudaimon_bench_{tag}_lg"
    missing = langgraph_missing()
    print("$ " + shlex.join([sys.executable, "benchmarks/postgres_step.py", *sys.argv[1:]]))
    print(f"PostgreSQL: {PostgresStore(args.dsn, schema=schema)!r}; SQLite: synchronous=FULL, temp dir")
    if missing is None:
        from importlib.metadata import version

        print(
            f"LangGraph {version('langgraph')}, langgraph-checkpoint-postgres "
            f"{version('langgraph-checkpoint-postgres')} (AsyncPostgresSaver), same server"
        )
    else:
        print(f"LangGraph: {missing}")
    print()
    header = (
        "| K | memory µs/step | sqlite µs/step | postgres µs/step | langgraph PG µs/step | PG ÷ LangGraph "
        "| postgres commits/step (server; store) | langgraph commits/step (server) |"
    )
    print(header)
    print("|" + "|".join("-" * (len(cell) + 2) for cell in header.strip("| ").split(" | ")) + "|")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for k in sizes:
                memory, _ = await measure(MemoryStore, k, args.repeat)
                sqlite, _ = await measure(partial(SqliteStore, Path(tmp) / f"k{k}.db"), k, args.repeat)
                postgres, _ = await measure(partial(PostgresStore, args.dsn, schema=schema), k, args.repeat)
                server, own = await eudaimon_pg_commits(args.dsn, counted, k)
                if missing is None:
                    lg, lg_commits = await measure_langgraph(args.dsn, lg_schema, k, args.repeat)
                    lg_cells = f"{lg:,.0f} | {postgres / lg:.2f} | {server:.2f}; {own:.2f} | {lg_commits:.2f}"
                else:
                    lg_cells = f"– | – | {server:.2f}; {own:.2f} | –"
                print(f"| {k} | {memory:,.0f} | {sqlite:,.0f} | {postgres:,.0f} | {lg_cells} |")
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            for name in (schema, counted, lg_schema):
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


if __name__ == "__main__":
    asyncio.run(main())
