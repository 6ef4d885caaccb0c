"""A step on PostgresStore, beside LangGraph's AsyncPostgresSaver on the same server (and SQLite, memory).

One step is one model answer asking for one async READ tool, the tool's run, and the journal
appends around them. The model is scripted (eudaimon's `ScriptedModel`; for LangGraph a
`BaseChatModel` answering the same way inside `create_react_agent`), so what is measured is each
framework's own work plus its persistence; MemoryStore is the no-I/O baseline. Every run is a
new run on a conversation thread of its own and is checked: K tool calls, K results, "done".
Each configuration runs on an OS thread of its own (its pool bound to that loop), after a
warm-up run that opens the pool and creates the schema; figures are medians.

eudaimon's commits per step are its store's `commit_count`. PostgreSQL is `$EUDAIMON_TEST_PG_DSN`
(default 127.0.0.1:5432, user postgres), in throwaway schemas.
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import _harness as h

ROUNDS = 1
DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
CALLS = {"n": 0}
"""LangGraph's tool executions: each run must execute exactly K."""


async def one_run(store: Any, steps: int) -> tuple[float, int]:
    """Seconds for a run of `steps` tool steps, and the commits it cost (by the store's count)."""
    agent = h.loop_agent(steps + 1, store=store)
    before = getattr(store, "commit_count", 0)
    started = time.perf_counter()
    response = await agent.prompt("go", thread_id=f"bench-{uuid.uuid4().hex}")
    elapsed = time.perf_counter() - started
    h.checked(response, steps + 1)
    return elapsed, getattr(store, "commit_count", 0) - before


async def store_steps(make: Callable[[], Any], steps: int, repeat: int) -> tuple[float, float]:
    """Median µs per step and commits per step over `repeat` runs of `steps` steps, one store."""
    store = make()
    try:
        await one_run(store, 5)  # warm-up: pool, schema, imports
        timings, commits = [], []
        for _ in range(repeat):
            seconds, count = await one_run(store, steps)
            timings.append(seconds / steps * 1e6)
            commits.append(count / steps)
        return h.median(timings), h.median(commits)
    finally:
        await store.close()


# -- LangGraph with AsyncPostgresSaver -------------------------------------------------------


class LangGraphLoop:
    """`create_react_agent` with a scripted chat model and `AsyncPostgresSaver` in `schema`."""

    def __init__(self, dsn: str, schema: str) -> None:
        self.dsn = dsn
        self.schema = schema
        self._saver_cm: Any = None
        self.saver: Any = None

    async def __aenter__(self) -> LangGraphLoop:
        import psycopg
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


async def measure_langgraph(dsn: str, schema: str, steps: int, repeat: int) -> float:
    """Median µs per step of LangGraph on PostgreSQL."""
    async with LangGraphLoop(dsn, schema) as loop:
        await loop.run(5)
        return h.median([await loop.run(steps) / steps * 1e6 for _ in range(repeat)])


def measure(quick: bool) -> dict[str, Any]:
    h.requires("psycopg", "langgraph.checkpoint.postgres")
    import psycopg

    from eudaimon.stores import MemoryStore
    from eudaimon.stores.postgres import PostgresStore
    from eudaimon.stores.sqlite import SqliteStore

    tag = uuid.uuid4().hex[:12]
    schema, lg_schema = f"eudaimon_bench_{tag}", f"eudaimon_bench_{tag}_lg"
    repeat = 1 if quick else 3
    figures: dict[str, Any] = {}
    try:
        with h.scratch("postgres-") as tmp:
            for k in [10] if quick else [10, 100]:
                h.say(f"K={k}")
                stores: dict[str, Callable[[], Any]] = {
                    "memory": MemoryStore,
                    "SQLite": lambda k=k: SqliteStore(Path(tmp) / f"k{k}.db", synchronous="full"),
                    "PostgreSQL": lambda: PostgresStore(DSN, schema=schema),
                }
                for name, make in stores.items():
                    us, commits = h.run_on_thread(lambda make=make, k=k: store_steps(make, k, repeat))
                    figures[f"K={k} / eudaimon, {name} µs/step"] = us
                    if name != "memory":
                        figures[f"K={k} / eudaimon, {name} commits/step"] = commits
                lg = h.run_on_thread(lambda k=k: measure_langgraph(DSN, lg_schema, k, repeat))
                figures[f"K={k} / LangGraph, PostgreSQL µs/step"] = lg
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            for name in (schema, lg_schema):
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    k = max(int(key.split(" ", 1)[0][2:]) for key in f)
    ours, theirs = f[f"K={k} / eudaimon, PostgreSQL µs/step"], f[f"K={k} / LangGraph, PostgreSQL µs/step"]
    return [h.Target(f"PostgreSQL step ≤ LangGraph's (K={k})", ours / theirs, 1.0, f"{ours:.0f} ÷ {theirs:.0f} µs")]
