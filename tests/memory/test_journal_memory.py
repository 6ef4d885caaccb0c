"""`JournalMemory`: a thread's history is its newest run's transcript, read from the journal.

Invariants: the history survives the process (it is the journal); it is cut only at whole
tool-call groups; a cleared thread's next run is sent nothing; a thread must be named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Role
from eudaimon.memory import JournalMemory
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore, SqliteStore


def _recording_model(seen: list[list[str]]) -> FunctionModel:
    def answer(request: ChatRequest) -> str:
        seen.append([f"{m.role.value}:{m.content}" for m in request.messages])
        return f"answer to {request.messages[-1].content}"

    return FunctionModel(answer)


async def test_a_new_process_continues_the_thread_from_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    first = SqliteStore(path)
    agent = Agent(_recording_model([]), store=first, memory=JournalMemory(first), system_prompt="sys")
    await agent.prompt("one", thread_id="t")
    await agent.prompt("two", thread_id="t")
    await first.close()

    seen: list[list[str]] = []
    again = SqliteStore(path)
    try:
        agent = Agent(_recording_model(seen), store=again, memory=JournalMemory(again), system_prompt="sys")
        await agent.prompt("three", thread_id="t")
        await agent.prompt("elsewhere", thread_id="u")
    finally:
        await again.close()
    assert seen[0] == [
        "system:sys",
        "user:one",
        "assistant:answer to one",
        "user:two",
        "assistant:answer to two",
        "user:three",
    ]
    assert seen[1] == ["system:sys", "user:elsewhere"]


@tool(effect="read")
async def lookup(key: str) -> str:
    """Look `key` up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


async def test_a_window_keeps_whole_tool_call_groups() -> None:
    store = MemoryStore()
    memory = JournalMemory(store, max_messages=2)
    script: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": "a"}), ToolCall("c2", "lookup", {"key": "b"})]),
        "done",
    ]
    agent = Agent(ScriptedModel(script), store=store, memory=memory, tools=[lookup])
    await agent.prompt("go", thread_id="t")
    history = await memory.get_messages("t")
    # The newest two messages would split nothing; the call and its two results are one group.
    assert [m.role for m in history] == [Role.ASSISTANT]
    assert history[0].content == "done"
    memory.max_messages = 4
    roles = [m.role for m in await memory.get_messages("t")]
    assert roles == [Role.ASSISTANT, Role.TOOL, Role.TOOL, Role.ASSISTANT]


async def test_a_cleared_thread_starts_afresh_and_stays_so() -> None:
    store = MemoryStore()
    memory = JournalMemory(store)
    seen: list[list[str]] = []
    agent = Agent(_recording_model(seen), store=store, memory=memory)
    await agent.prompt("one", thread_id="t")
    await memory.clear("t")
    assert await memory.get_messages("t") == []
    await agent.prompt("two", thread_id="t")
    await agent.prompt("three", thread_id="t")
    assert seen[1] == ["user:two"]
    assert seen[2] == ["user:two", "assistant:answer to two", "user:three"]


async def test_the_thread_must_be_known() -> None:
    store = MemoryStore()
    memory = JournalMemory(store)
    with pytest.raises(ConfigurationError, match="default_thread"):
        await memory.get_messages()
    agent = Agent(_recording_model([]), store=store, memory=JournalMemory(store, default_thread="agent:default"))
    await agent.prompt("one")
    assert [m.content for m in await agent.memory.get_messages()] == ["one", "answer to one"]


def test_a_window_that_holds_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="max_messages"):
        JournalMemory(MemoryStore(), max_messages=0)
