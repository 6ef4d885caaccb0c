"""SummaryMemory: old messages are folded into a summary, and a failed summary loses nothing."""

from __future__ import annotations

import asyncio

import pytest

from eudaimon.core.errors import ModelUnavailable
from eudaimon.core.messages import Message, Role, ToolCall
from eudaimon.memory import SummaryMemory
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel


def users(start: int, stop: int) -> list[Message]:
    return [Message.user(f"fact {i}", id=f"u{i}") for i in range(start, stop)]


async def test_a_failed_summary_loses_nothing_and_is_retried() -> None:
    """No loss on failure: when the model raises, every message stays; the next add retries,
    and then the summary replaces the old messages and leads the context."""
    calls: list[ChatRequest] = []

    def flaky(request: ChatRequest) -> str:
        calls.append(request)
        if len(calls) == 1:
            raise ModelUnavailable("provider down", model="summariser")
        return "the user listed facts 0 to 3"

    memory = SummaryMemory(FunctionModel(flaky), max_messages=5, retain_recent=2)
    for message in users(0, 6):
        await memory.add_message(message)
    assert len(calls) == 1
    assert await memory.current_summary() is None
    assert await memory.get_messages() == users(0, 6)

    await memory.add_message(Message.user("fact 6", id="u6"))
    assert len(calls) == 2
    assert await memory.current_summary() == "the user listed facts 0 to 3"
    got = await memory.get_messages()
    assert got[0].role is Role.SYSTEM
    assert got[0].content.endswith("the user listed facts 0 to 3")
    assert got[1:] == users(5, 7)
    assert "fact 4" in calls[1].messages[-1].content


async def test_the_previous_summary_is_folded_into_the_next() -> None:
    """Running summary: each summarisation is sent the summary so far, the prompt as the system
    message, and replaces the summary with the model's answer."""
    model = ScriptedModel(["first summary", "second summary"])
    memory = SummaryMemory(model, max_messages=3, retain_recent=1, summary_prompt="Summarise tersely.")
    for message in users(0, 4):
        await memory.add_message(message)
    assert await memory.current_summary() == "first summary"
    for message in users(4, 7):
        await memory.add_message(message)
    assert await memory.current_summary() == "second summary"
    second = model.requests[1]
    assert second.messages[0].role is Role.SYSTEM and second.messages[0].content == "Summarise tersely."
    assert "Summary so far:\nfirst summary" in second.messages[1].content
    assert "fact 3" in second.messages[1].content and "fact 0" not in second.messages[1].content
    assert await memory.get_messages("another thread") == []
    assert await memory.current_summary("another thread") is None


async def test_the_cut_never_splits_a_tool_group() -> None:
    """Whole groups: when the retained tail would start inside a tool group, the whole group is
    kept verbatim (the cut moves back), so no result is separated from its call."""
    model = ScriptedModel(["summary"])
    memory = SummaryMemory(model, max_messages=4, retain_recent=2)
    calls = [ToolCall("c1", "f", {}), ToolCall("c2", "f", {})]
    history = [
        Message.user("go", id="u"),
        Message.assistant(None, calls, id="a"),
        Message.tool("c1", "one", id="t1"),
        Message.tool("c2", "two", id="t2"),
        Message.assistant("done", id="d"),
    ]
    for message in history:
        await memory.add_message(message)
    got = await memory.get_messages()
    assert [m.id for m in got[1:]] == ["a", "t1", "t2", "d"]
    assert "user: go" in model.requests[0].messages[1].content


async def test_messages_added_while_summarising_are_kept() -> None:
    """No loss under concurrency: messages added while the model is still summarising stay, and
    only the messages the summary covers leave."""
    release = asyncio.Event()

    async def slow(request: ChatRequest) -> str:
        await release.wait()
        return "slow summary"

    memory = SummaryMemory(FunctionModel(slow), max_messages=3, retain_recent=1)
    for message in users(0, 3):
        await memory.add_message(message)
    summarising = asyncio.create_task(memory.add_message(Message.user("fact 3", id="u3")))
    await asyncio.sleep(0)
    for message in users(4, 6):
        await memory.add_message(message)
    release.set()
    await summarising
    got = await memory.get_messages()
    assert got[0].content.endswith("slow summary")
    assert got[1:] == users(3, 6)


def test_retain_recent_must_leave_something_to_summarise() -> None:
    """Configuration errors are caught at construction: retain_recent < max_messages."""
    with pytest.raises(ValueError, match="retain_recent"):
        SummaryMemory(ScriptedModel([]), max_messages=5, retain_recent=5)
