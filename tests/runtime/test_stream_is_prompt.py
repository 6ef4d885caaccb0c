"""`prompt` and `prompt_stream` are one loop: the same run journals the same events."""

from __future__ import annotations

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore
from eudaimon.streaming import Done, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart, ToolResult, Usage


@tool(effect="read")
def weather(city: str) -> str:
    """Weather in a city."""
    return f"sunny in {city}"


def _script() -> list[Message | str]:
    return [
        Message.assistant(
            "Let me check.", [ToolCall("c1", "weather", {"city": "Oslo"}), ToolCall("c2", "weather", {"city": "Rome"})]
        ),
        "It is sunny in Oslo and in Rome, enjoy the day.",
    ]


async def test_stream_and_prompt_write_the_same_journal() -> None:
    """Invariant: a streamed run and a prompted run of one script fold to equal states
    (but for ids and times) and journal the same event types."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(_script()), tools=[weather], store=store)
    response = await agent.prompt("weather?")
    streamed = Agent(ScriptedModel(_script()), tools=[weather], store=store)
    events = [e async for e in streamed.prompt_stream("weather?")]
    done = events[-1]
    assert isinstance(done, Done) and done.status == "completed"
    a, b = await store.load(response.run_id), await store.load(done.run_id)
    assert [e.type for e in a] == [e.type for e in b]
    sa, sb = await agent.state(response.run_id), await agent.state(done.run_id)
    assert [(m.role, m.content, m.tool_calls) for m in sa.messages] == [
        (m.role, m.content, m.tool_calls) for m in sb.messages
    ]
    assert (sa.status, sa.steps, sa.usage) == (sb.status, sb.steps, sb.usage)


async def test_stream_yields_every_variant_in_order() -> None:
    """Invariant: text arrives in several deltas; each call is start, deltas, end; its result
    follows; each iteration reports usage; Done closes the stream."""
    agent = Agent(ScriptedModel(_script()), tools=[weather])
    events = [e async for e in agent.prompt_stream("weather?")]
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "TextDelta"
    assert isinstance(events[-1], Done)
    final_text = [e.text for e in events[kinds.index("Usage") + 1 :] if isinstance(e, TextDelta)]
    assert len(final_text) > 3 and "".join(final_text) == "It is sunny in Oslo and in Rome, enjoy the day."
    for call_id in ("c1", "c2"):
        positions = [
            i
            for i, e in enumerate(events)
            if isinstance(e, ToolCallStart | ToolCallDelta | ToolCallEnd | ToolResult) and e.id == call_id
        ]
        sequence = [type(events[i]).__name__ for i in positions]
        assert sequence[0] == "ToolCallStart" and sequence[-2:] == ["ToolCallEnd", "ToolResult"]
        assert "ToolCallDelta" in sequence
    usages = [e for e in events if isinstance(e, Usage)]
    assert [u.iteration for u in usages] == [1, 2]


async def test_stream_of_a_failed_run_ends_with_error_then_done() -> None:
    """Invariant: a run that fails tells the stream consumer why, then closes with Done."""
    agent = Agent(
        ScriptedModel([Message.assistant(tool_calls=[ToolCall("c", "weather", {"city": "x"})])] * 3),
        tools=[weather],
        max_iterations=2,
    )
    events = [e async for e in agent.prompt_stream("loop")]
    assert type(events[-2]).__name__ == "Error" and "max_iterations=2" in events[-2].message  # type: ignore[attr-defined]
    assert isinstance(events[-1], Done) and events[-1].status == "failed"
