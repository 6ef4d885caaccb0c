"""`response.new_messages()` / `all_messages()`, and `prompt(..., message_history=…)` for callers
that keep the conversation themselves."""

from __future__ import annotations

import pytest

from eudaimon import Agent, Message, Role, ToolCall, tool
from eudaimon.core.events import RunStarted
from eudaimon.models import ScriptedModel


@tool(effect="read")
def clock() -> str:
    """The time."""
    return "noon"


async def test_new_and_all_messages() -> None:
    """Invariant: `all_messages()` is the whole conversation; `new_messages()` starts at this
    run's input, leaving out the instructions and the history memory supplied."""
    model = ScriptedModel(["hello", Message.assistant(tool_calls=[ToolCall("c1", "clock", {})]), "it is noon"])
    agent = Agent(model, system_prompt="Be brief.", tools=[clock])
    await agent.prompt("hi")
    second = await agent.prompt("time?")
    assert [m.role for m in second.all_messages()] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert [m.content for m in second.new_messages()] == ["time?", "", "noon", "it is noon"]


async def test_message_history_replaces_memory_and_is_journaled() -> None:
    """Invariant: history given by the caller follows the agent's instructions (its own system
    messages dropped, so instructions are not doubled), is journaled in `run_started` like any
    history, and neither reads nor feeds memory."""
    model = ScriptedModel(["first answer", "second answer"])
    agent = Agent(model, system_prompt="Be brief.")
    first = await agent.prompt("one", thread_id="kept-by-caller")
    second = await agent.prompt("two", message_history=first.all_messages(), thread_id="other")
    sent = model.requests[1].messages
    assert [(m.role, m.content) for m in sent] == [
        (Role.SYSTEM, "Be brief."),
        (Role.USER, "one"),
        (Role.ASSISTANT, "first answer"),
        (Role.USER, "two"),
    ]
    started = (await agent.store.load(second.run_id))[0].data
    assert isinstance(started, RunStarted)
    assert [m.content for m in started.messages] == ["Be brief.", "one", "first answer", "two"]
    assert not started.uses_memory
    assert await agent.memory.get_messages("other") == []
    assert [m.content for m in second.new_messages()] == ["two", "second answer"]


async def test_message_history_must_be_messages() -> None:
    """Bug guard: a history that is not a list of Message is a TypeError before anything runs."""
    agent = Agent(ScriptedModel(["never"]))
    with pytest.raises(TypeError, match=r"message_history\[0\] is a dict"):
        await agent.prompt("x", message_history=[{"role": "user", "content": "hi"}])  # type: ignore[list-item]
    assert await agent.store.list_runs() == []
