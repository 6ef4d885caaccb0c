"""eudaimon driven by the shared transcript through `FunctionModel` (its fake-model hook).

`FunctionModel` rather than `ScriptedModel` because the transcript is a function of the latest
message: one agent then serves any number of runs, as a peer's compiled agent does, and the
fake costs the same O(1) per call as every peer's fake.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import Any

from common import Outcome
from transcript import Result, Turn, echo_output, fetch_output

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.messages import Role
from eudaimon.memory import JournalMemory
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import MemoryStore
from eudaimon.stores.sqlite import SqliteStore
from eudaimon.streaming import TextDelta

NAME = "eudaimon"


def version() -> str:
    return f"eudaimon {_dist_version('eudaimon')}"


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


async def fetch(n: int) -> str:
    """Return the 4 KB record `n`."""
    return fetch_output(n)


_TOOLS = {"echo": echo, "fetch": fetch}


def _latest(request: ChatRequest) -> tuple[str | None, list[Result]]:
    messages = request.messages
    last = messages[-1]
    if last.role is Role.USER:
        return last.content, []
    results: list[Result] = []
    i = len(messages) - 1
    while i >= 0 and messages[i].role is Role.TOOL:
        results.append(Result(messages[i].tool_call_id or "", messages[i].content))
        i -= 1
    results.reverse()
    return None, results


def _message(turn: Turn) -> Message:
    if turn.calls:
        return Message.assistant(tool_calls=[ToolCall(c.id, c.name, dict(c.args)) for c in turn.calls])
    return Message.assistant(turn.text)


def answerer(transcript: Any) -> Callable[[ChatRequest], Message]:
    """The transcript's answer to a request: the fake model's whole work."""

    def answer(request: ChatRequest) -> Message:
        question, results = _latest(request)
        return _message(transcript.first(question) if question is not None else transcript.after_tools(results))

    return answer


def _model(transcript: Any, latency_s: float) -> FunctionModel:
    answer = answerer(transcript)
    if latency_s:

        async def slow(request: ChatRequest) -> Message:
            await asyncio.sleep(latency_s)
            return answer(request)

        return FunctionModel(slow, model_id="fake", chunk_chars=16)
    return FunctionModel(answer, model_id="fake", chunk_chars=16)


def construct() -> Any:
    """Workload 1: an agent with one tool (a plain async function, wrapped by `Agent`)."""
    return Agent(FunctionModel(lambda r: "ok"), tools=[echo])


def make(
    transcript: Any,
    *,
    latency_s: float = 0.0,
    store: Any = None,
    memory: Any = None,
    max_steps: int = 25,
    model: FunctionModel | None = None,
) -> Agent:
    """An agent for `transcript`; `model` replaces the transcript's fake (`cold_start.py` times its calls)."""
    return Agent(
        model or _model(transcript, latency_s),
        tools=[_TOOLS[transcript.tool]] if getattr(transcript, "tool", None) else [],
        store=store if store is not None else MemoryStore(),
        memory=memory,
        max_iterations=max_steps + 1,
    )


def _outcome(response: Any) -> Outcome:
    if response.status != "completed":
        raise RuntimeError(f"eudaimon run ended {response.status}")
    tools = sum(1 for m in response.messages if m.role is Role.TOOL)
    return Outcome(response.final_text, tools, {"iterations": response.iterations})


_threads = iter(range(10**12))


def _fresh_thread() -> str:
    return f"bench-{next(_threads)}"


async def run(agent: Agent, question: str, *, thread_id: str | None = None, **_: Any) -> Outcome:
    """One run. Without a `thread_id` it gets a thread of its own, as each peer run is its own
    conversation (eudaimon runs one prompt at a time per thread, its default thread included)."""
    return _outcome(await agent.prompt(question, thread_id=thread_id or _fresh_thread()))


async def stream(agent: Agent, question: str) -> tuple[int, Outcome]:
    deltas = 0
    text: list[str] = []
    async for event in agent.prompt_stream(question, thread_id=_fresh_thread()):
        if isinstance(event, TextDelta):
            deltas += 1
            text.append(event.text)
    return deltas, Outcome("".join(text), 0)


# -- durable -------------------------------------------------------------------------------


async def durable_loop(transcript: Any, path: Path, k: int) -> tuple[float, Outcome, dict[str, Any]]:
    """Workload 6: one run of K steps on a fresh `SqliteStore` (synchronous=full: fsync per commit)."""
    import time

    store = SqliteStore(path, synchronous="full")
    agent = make(transcript, store=store, max_steps=k)
    await store.list_runs(limit=1)  # open the file and create the schema outside the timing
    commits0 = store.commit_count
    start = time.perf_counter()
    outcome = await run(agent, transcript.question())
    elapsed = time.perf_counter() - start
    commits = store.commit_count - commits0
    await store.close()
    return elapsed, outcome, {"commits": commits, "synchronous": "FULL (SqliteStore default, synchronous='full')"}


async def thread(transcript: Any, directory: Path, turns: int, marks: list[int]) -> dict[str, Any]:
    """Workload 4: one thread of `turns` prompts, its whole history sent every turn. The history
    is read back from the journal (`JournalMemory`), so one file holds everything. Sizes are
    taken at each mark with everything closed."""
    from common import sqlite_bytes
    from transcript import thread_question

    journal = directory / "journal.db"
    sizes: dict[int, dict[str, int]] = {}
    outcome: Outcome | None = None
    done = 0
    for mark in marks:
        store = SqliteStore(journal, synchronous="full")
        agent = make(transcript, store=store, memory=JournalMemory(store))
        for n in range(done, mark):
            outcome = await run(agent, thread_question(n), thread_id="thread-1")
        done = mark
        await store.close()
        journal_bytes = sqlite_bytes(journal)
        sizes[mark] = {"file": journal_bytes["file"], "used": journal_bytes["used"]}
    assert outcome is not None
    return {"sizes": sizes, "outcome": outcome, "by_type": await _bytes_by_event_type(journal)}


async def _bytes_by_event_type(path: Path) -> dict[str, int]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT type, SUM(LENGTH(payload)) FROM events GROUP BY type").fetchall()
        snap = conn.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM snapshots").fetchone()[0]
        texts = conn.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM texts").fetchone()[0]
        messages = conn.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM messages").fetchone()[0]
    finally:
        conn.close()
    out = {t: int(n) for t, n in rows}
    out["(snapshots)"] = int(snap)
    out["(texts, stored once)"] = int(texts)
    out["(messages, stored once)"] = int(messages)
    return out
