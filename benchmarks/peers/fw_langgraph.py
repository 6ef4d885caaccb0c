"""LangGraph driven by the shared transcript: a `BaseChatModel` subclass (tool calls "bound" by
returning itself from `bind_tools`) inside `langgraph.prebuilt.create_react_agent`.

In memory: no checkpointer, and `InMemorySaver`. Durable: `SqliteSaver` (its `invoke` path,
sync model and tool; its async saver, on aiosqlite, is slower) on a connection set to
`PRAGMA synchronous=FULL` (checked by reading it back), so every commit is an fsync as it is
for eudaimon's `SqliteStore`. `recursion_limit = 2K+5`, so that a K-step loop is not cut.
"""

from __future__ import annotations

import sqlite3
import time
import warnings
from itertools import count
from pathlib import Path
from typing import Any

from peers import Outcome
from peers.transcript import Result, Turn, echo_output

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*create_react_agent.*")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402

try:  # LangGraph 1.x warns that create_react_agent moved to langchain.agents; it still ships.
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)
except ImportError:  # pragma: no cover
    pass


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


def echo_sync(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


echo_sync.__name__ = "echo"


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
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])


def make(transcript: Any, *, checkpointer: Any = None, sync_tools: bool = False, **_: Any) -> Any:
    model = TranscriptChatModel(transcript=transcript)
    return create_react_agent(model, [echo_sync if sync_tools else echo], checkpointer=checkpointer)


def make_in_memory_saver(transcript: Any, **_: Any) -> Any:
    return make(transcript, checkpointer=InMemorySaver())


_counter = count()


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


# -- durable -------------------------------------------------------------------------------


def _full_sync(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA synchronous=FULL")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2, "synchronous is not FULL"


def durable_loop_sync(transcript: Any, path: Path, k: int, durability: str = "async") -> tuple[float, Outcome]:
    """LangGraph's `SqliteSaver` on its sync path (`invoke`, sync model and tool)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()  # WAL + tables, outside the timing
    _full_sync(conn)
    agent = make(transcript, checkpointer=saver, sync_tools=True)
    start = time.perf_counter()
    outcome = run_sync(agent, transcript.question(), max_steps=k, durability=durability)
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed, outcome
