"""eudaimon driven by the shared transcript through `FunctionModel` (its fake-model hook).

`FunctionModel` rather than `ScriptedModel` because the transcript is a function of the latest
message: one agent then serves any number of runs, as a peer's compiled agent does, and the
fake costs the same O(1) per call as every peer's fake.
"""

from __future__ import annotations

import time
from itertools import count
from pathlib import Path
from typing import Any

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.messages import Role
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import MemoryStore
from eudaimon.stores.sqlite import SqliteStore
from peers import Outcome
from peers.transcript import Result, Turn, echo_output


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


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


def make(transcript: Any, *, store: Any = None, max_steps: int = 25, calls: list[float] | None = None) -> Agent:
    """An agent for `transcript`; `calls` collects the `perf_counter` of every model call (a run's start)."""

    def answer(request: ChatRequest) -> Message:
        if calls is not None:
            calls.append(time.perf_counter())
        question, results = _latest(request)
        return _message(transcript.first(question) if question is not None else transcript.after_tools(results))

    return Agent(
        FunctionModel(answer, model_id="fake"),
        tools=[echo],
        store=store if store is not None else MemoryStore(),
        max_iterations=max_steps + 1,
    )


_threads = count()


async def run(agent: Agent, question: str, **_: Any) -> Outcome:
    """One run on a conversation thread of its own, as each peer run is its own conversation
    (eudaimon runs one prompt at a time per thread, its default thread included)."""
    response = await agent.prompt(question, thread_id=f"bench-{next(_threads)}")
    if response.status != "completed":
        raise RuntimeError(f"eudaimon run ended {response.status}")
    return Outcome(response.final_text, sum(1 for m in response.messages if m.role is Role.TOOL))


async def durable_loop(transcript: Any, path: Path, k: int) -> tuple[float, Outcome, float]:
    """One K-step run on a fresh `SqliteStore` (synchronous=full: an fsync per commit): seconds,
    outcome, commits per step."""
    store = SqliteStore(path, synchronous="full")
    agent = make(transcript, store=store, max_steps=k)
    await store.list_runs(limit=1)  # open the file and create the schema outside the timing
    commits = store.commit_count
    start = time.perf_counter()
    outcome = await run(agent, transcript.question())
    elapsed = time.perf_counter() - start
    commits = store.commit_count - commits
    await store.close()
    return elapsed, outcome, commits / k
