"""LangGraph driven by the shared transcript: a `BaseChatModel` subclass (tool calls "bound" by
returning itself from `bind_tools`) inside `langgraph.prebuilt.create_react_agent`.

In memory: no checkpointer, and `InMemorySaver`. Durable: the sync `SqliteSaver` (its own
`invoke` path, sync model and tool) and `AsyncSqliteSaver` (aiosqlite), each on a connection set
to `PRAGMA synchronous=FULL` (checked by reading it back), so every commit is an fsync as it
is for eudaimon's `SqliteStore`.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import Any

from common import Outcome
from transcript import Result, Turn, echo_output, fetch_output

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*create_react_agent.*")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402

try:  # LangGraph 1.x warns that create_react_agent moved to langchain.agents; it still ships.
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)
except ImportError:  # pragma: no cover
    pass

NAME = "langgraph"


def version() -> str:
    return f"langgraph {_dist_version('langgraph')}, langchain-core {_dist_version('langchain-core')}"


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


async def fetch(n: int) -> str:
    """Return the 4 KB record `n`."""
    return fetch_output(n)


def echo_sync(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


def fetch_sync(n: int) -> str:
    """Return the 4 KB record `n`."""
    return fetch_output(n)


echo_sync.__name__ = "echo"
fetch_sync.__name__ = "fetch"
_TOOLS = {"echo": echo, "fetch": fetch}
_SYNC_TOOLS = {"echo": echo_sync, "fetch": fetch_sync}


def _latest(messages: list[BaseMessage]) -> tuple[str | None, list[Result]]:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return str(last.content), []
    results: list[Result] = []
    i = len(messages) - 1
    while i >= 0 and isinstance(messages[i], ToolMessage):
        m = messages[i]
        results.append(Result(m.tool_call_id, m.content if isinstance(m.content, str) else str(m.content)))
        i -= 1
    results.reverse()
    return None, results


def _ai(turn: Turn) -> AIMessage:
    if turn.calls:
        return AIMessage(
            content="",
            tool_calls=[{"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"} for c in turn.calls],
        )
    return AIMessage(content=turn.text)


class TranscriptChatModel(BaseChatModel):
    """A chat model whose answer is the transcript's, read off the latest messages."""

    transcript: Any
    latency_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "transcript"

    def bind_tools(self, tools: Any, **kwargs: Any) -> TranscriptChatModel:  # type: ignore[override]
        return self

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        question, results = _latest(messages)
        return _ai(self.transcript.first(question) if question is not None else self.transcript.after_tools(results))

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        raise NotImplementedError("the benchmark streams through the async path")

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self._answer(messages)
        if message.tool_calls:
            chunks = [
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": j, "type": "tool_call_chunk"}
                for j, c in enumerate(message.tool_calls)
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=chunks))
            return
        for piece in self.transcript.pieces:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def construct() -> Any:
    """Workload 1: an agent with one tool (a plain async function)."""
    return create_react_agent(TranscriptChatModel(transcript=None), [echo])


def make(
    transcript: Any, *, latency_s: float = 0.0, checkpointer: Any = None, sync_tools: bool = False, **_: Any
) -> Any:
    tools = _SYNC_TOOLS if sync_tools else _TOOLS
    tool_list = [tools[transcript.tool]] if getattr(transcript, "tool", None) else []
    model = TranscriptChatModel(transcript=transcript, latency_s=latency_s)
    return create_react_agent(model, tool_list, checkpointer=checkpointer)


def make_in_memory_saver(transcript: Any, **kw: Any) -> Any:
    return make(transcript, checkpointer=InMemorySaver(), **kw)


_counter = iter(range(10**12))


def _config(max_steps: int, thread_id: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {"recursion_limit": 2 * max_steps + 5}
    config["configurable"] = {"thread_id": thread_id or f"t{next(_counter)}"}
    return config


def _outcome(messages: list[BaseMessage], new_from: int = 0) -> Outcome:
    final = messages[-1]
    tools = sum(1 for m in messages[new_from:] if isinstance(m, ToolMessage))
    return Outcome(str(final.content), tools)


async def run(
    agent: Any, question: str, *, max_steps: int = 25, thread_id: str | None = None, durability: str | None = None
) -> Outcome:
    kw = {"durability": durability} if durability else {}
    state = await agent.ainvoke({"messages": [HumanMessage(question)]}, _config(max_steps, thread_id), **kw)
    return _outcome(state["messages"])


def run_sync(
    agent: Any, question: str, *, max_steps: int = 25, thread_id: str | None = None, durability: str | None = None
) -> Outcome:
    kw = {"durability": durability} if durability else {}
    state = agent.invoke({"messages": [HumanMessage(question)]}, _config(max_steps, thread_id), **kw)
    return _outcome(state["messages"])


async def stream(agent: Any, question: str) -> tuple[int, Outcome]:
    deltas = 0
    text: list[str] = []
    request = {"messages": [HumanMessage(question)]}
    async for chunk, _meta in agent.astream(request, _config(2, None), stream_mode="messages"):
        if isinstance(chunk, AIMessageChunk) and chunk.content:
            deltas += 1
            text.append(str(chunk.content))
    return deltas, Outcome("".join(text), 0)


# -- durable -------------------------------------------------------------------------------


def _full_sync(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA synchronous=FULL")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2, "synchronous is not FULL"


def durable_loop_sync(
    transcript: Any, path: Path, k: int, durability: str = "async"
) -> tuple[float, Outcome, dict[str, Any]]:
    """Workload 6, LangGraph's `SqliteSaver` on its sync path (`invoke`, sync model and tool)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()  # WAL + tables, outside the timing
    _full_sync(conn)
    agent = make(transcript, checkpointer=saver, sync_tools=True)
    commits = _count_commits(conn)
    start = time.perf_counter()
    outcome = run_sync(agent, transcript.question(), max_steps=k, durability=durability)
    elapsed = time.perf_counter() - start
    n = commits()
    conn.close()
    return (
        elapsed,
        outcome,
        {"commits": n, "synchronous": "FULL (PRAGMA synchronous=FULL on the saver's connection, read back)"},
    )


async def durable_loop_async(
    transcript: Any, path: Path, k: int, durability: str = "async"
) -> tuple[float, Outcome, dict[str, Any]]:
    """Workload 6, LangGraph's `AsyncSqliteSaver` (aiosqlite) with `ainvoke`."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    conn = await aiosqlite.connect(str(path))
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    await conn.execute("PRAGMA synchronous=FULL")
    async with conn.execute("PRAGMA synchronous") as cur:
        row = await cur.fetchone()
    assert row is not None and row[0] == 2, "synchronous is not FULL"
    agent = make(transcript, checkpointer=saver)
    counter = _CommitCounter(conn)
    start = time.perf_counter()
    outcome = await run(agent, transcript.question(), max_steps=k, durability=durability)
    elapsed = time.perf_counter() - start
    await conn.close()
    return elapsed, outcome, {"commits": counter.count, "synchronous": "FULL (PRAGMA on the aiosqlite connection)"}


def _count_commits(conn: sqlite3.Connection) -> Any:
    """Commits the saver issues: `SqliteSaver.cursor(transaction=True)` commits when it closes
    (once per `put` / `put_writes`); reads open it with transaction=False. The stdlib has no
    commit hook, so the class method is wrapped for the duration of the run."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    count = {"n": 0}
    original = SqliteSaver.cursor

    def counted(self: Any, transaction: bool = True) -> Any:
        count["n"] += transaction
        return original(self, transaction)

    SqliteSaver.cursor = counted  # type: ignore[method-assign]

    def done() -> int:
        SqliteSaver.cursor = original  # type: ignore[method-assign]
        return count["n"]

    return done


class _CommitCounter:
    def __init__(self, conn: Any) -> None:
        self.count = 0
        original = conn.commit

        async def commit() -> None:
            self.count += 1
            await original()

        conn.commit = commit


# -- thread ----------------------------------------------------------------------------------


def thread(transcript: Any, directory: Path, turns: int, marks: list[int]) -> dict[str, Any]:
    """Workload 4 with `SqliteSaver` (sync path): one thread_id, one `invoke` per turn."""
    from common import sqlite_bytes
    from langgraph.checkpoint.sqlite import SqliteSaver
    from transcript import thread_question

    path = directory / "checkpoints.db"
    sizes: dict[int, dict[str, int]] = {}
    done = 0
    outcome: Outcome | None = None
    for mark in marks:
        conn = sqlite3.connect(str(path), check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        _full_sync(conn)
        agent = make(transcript, checkpointer=saver, sync_tools=True)
        state: Any = None
        for n in range(done, mark):
            state = agent.invoke(
                {"messages": [HumanMessage(thread_question(n))]},
                {"recursion_limit": 50, "configurable": {"thread_id": "thread-1"}},
            )
        done = mark
        outcome = _outcome(state["messages"])
        conn.close()
        measured = sqlite_bytes(path)
        sizes[mark] = {"file": measured["file"], "used": measured["used"]}
    assert outcome is not None
    conn = sqlite3.connect(str(path))
    try:
        by_table = {
            "checkpoints": conn.execute(
                "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
            ).fetchone()[0],
            "writes": conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[0],
        }
    finally:
        conn.close()
    return {"sizes": sizes, "outcome": outcome, "by_type": by_table}
