"""An all-READ step commits once whatever the agent's memory and the run's thread.

Issue 40 reported fewer fsyncs for a READ loop with the default memory and no thread than with
a thread of each run's own (as every run a server starts has) or `memory=None`. The commits
are the durability promise made visible: one before each model call, the READ step's intents
and results riding with the next attempt. Counted here on a real SQLite file: the same number
of commits per run in every configuration, for the first run of a thread and a later one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.stores.sqlite import SqliteStore

K = 5
"""Model calls a run makes: K-1 that each ask for one READ call, then the answer."""


@tool(effect="read")
async def peek(i: int) -> int:
    """Return `i`.

    Args:
        i: Any integer.
    """
    return i


def _read_loop_agent(store: SqliteStore, memory: bool) -> Agent:
    script: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", "peek", {"i": i})]) for i in range(K - 1)
    ]
    options: dict[str, object] = {} if memory else {"memory": None}
    return Agent(ScriptedModel([*script, "done"]), tools=[peek], store=store, max_iterations=K + 1, **options)  # type: ignore[arg-type]


async def _commits_of_two_runs(path: Path, memory: bool, threaded: bool) -> list[int]:
    store = SqliteStore(path, synchronous="full")
    try:
        await store.list_runs(limit=1)  # the schema's creation is not a run's commit
        counts = []
        for i in range(2):
            before = store.commit_count
            thread = f"thread-{i}" if threaded else None
            response = await _read_loop_agent(store, memory).prompt(f"run {i}", thread_id=thread)
            assert response.status == "completed" and response.iterations == K
            counts.append(store.commit_count - before)
        return counts
    finally:
        await store.close()


@pytest.mark.parametrize("memory", [True, False], ids=["default memory", "memory=None"])
@pytest.mark.parametrize("threaded", [False, True], ids=["no thread", "a thread each"])
async def test_an_all_read_step_commits_once_whatever_the_memory_and_the_thread(
    tmp_path: Path, memory: bool, threaded: bool
) -> None:
    """Invariant: a K-step all-READ run commits K + 1 times (the first attempt with the run's
    start, one per READ step riding with the next attempt, the answer with the run's end), with
    the default memory or none, on no thread or a thread of its own, first run or later."""
    assert await _commits_of_two_runs(tmp_path / "runs.db", memory, threaded) == [K + 1, K + 1]
