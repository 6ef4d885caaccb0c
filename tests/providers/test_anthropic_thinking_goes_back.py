"""Invariant: with extended thinking, the `thinking` and `redacted_thinking` blocks Anthropic
returns are kept on the assistant message (`ThinkingPart`), through the journal, and sent back
unchanged and first in that assistant turn: the API refuses a tool-use loop that drops them,
and checks each signature. They are never shown as answer text, and Chat Completions, which
has no place for them, never receives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _wire import WEATHER, ask, collect

from eudaimon import Agent, ModelSettings, tool
from eudaimon.core.messages import Message, Role, ThinkingPart, ToolCall
from eudaimon.models import ChatRequest
from eudaimon.models._openai_convert import wire_message
from eudaimon.stores.sqlite import SqliteStore
from eudaimon.streaming import TextDelta, ToolCallEnd, ToolCallStart

THOUGHT = {"type": "thinking", "thinking": "Paris first, then compare.", "signature": "sig-Ab12=="}
REDACTED = {"type": "redacted_thinking", "data": "ENCRYPTED-opaque=="}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
KEPT = (
    ThinkingPart(thinking="Paris first, then compare.", signature="sig-Ab12=="),
    ThinkingPart(redacted="ENCRYPTED-opaque=="),
)


def _assistant_turn(body: dict[str, Any]) -> list[dict[str, Any]]:
    [turn] = [m for m in body["messages"] if m["role"] == "assistant"]
    content: list[dict[str, Any]] = turn["content"]
    return content


async def test_thinking_blocks_are_kept_and_sent_back_first(anthropic_server, anthropic_model):
    anthropic_server.reply(
        anthropic_server.message(
            [THOUGHT, REDACTED, {"type": "text", "text": "Checking."}, CALL], stop_reason="tool_use"
        )
    )
    response = await anthropic_model.generate(ask(tools=[WEATHER]))
    assert response.message.parts == KEPT
    assert response.text() == "Checking."  # thinking is not answer text
    assert response.message.tool_calls == (ToolCall("toolu_1", "get_weather", {"city": "Paris"}),)

    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "Sunny."}]))
    followed = [Message.user("hi"), response.message, Message.tool("toolu_1", "22 °C, sunny")]
    await anthropic_model.generate(ChatRequest(followed, [WEATHER]))
    assert _assistant_turn(anthropic_server.requests[1].body) == [
        THOUGHT,
        REDACTED,
        {"type": "text", "text": "Checking."},
        CALL,
    ]


async def test_streamed_thinking_is_kept_whole_and_never_streamed_as_text(anthropic_server, anthropic_model):
    a = anthropic_server
    thinking = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris first, "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "then compare."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-Ab12=="}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": REDACTED},
        {"type": "content_block_stop", "index": 1},
    ]
    a.reply(
        a.stream(
            [
                a.message_start(),
                *thinking,
                *a.text_block(2, ["Checking."]),
                *a.tool_block(3, "toolu_1", "get_weather", ['{"city": "Paris"}']),
                *a.message_end("tool_use"),
            ]
        )
    )
    deltas, response = await collect(anthropic_model, ask(tools=[WEATHER]))
    assert deltas == [
        TextDelta("Checking."),
        ToolCallStart("toolu_1", "get_weather"),
        *deltas[2:-1],
        ToolCallEnd("toolu_1"),
    ]
    assert response.message.parts == KEPT
    assert response.text() == "Checking."


async def test_a_durable_tool_loop_sends_the_journaled_thinking_back(anthropic_server, anthropic_model, tmp_path: Path):
    @tool(effect="read")
    async def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: The city.
        """
        return "22 °C, sunny"

    anthropic_server.reply(
        anthropic_server.message([THOUGHT, REDACTED, CALL], stop_reason="tool_use"),
        anthropic_server.message([{"type": "text", "text": "Sunny in Paris."}]),
    )
    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(
        anthropic_model,
        tools=[get_weather],
        store=store,
        memory=None,
        model_settings=ModelSettings(thinking_budget_tokens=1024, max_tokens=2048),
    )
    response = await agent.prompt("Weather in Paris?")
    assert response.final_text == "Sunny in Paris."
    first, second = (r.body for r in anthropic_server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert _assistant_turn(second)[:2] == [THOUGHT, REDACTED]  # from the journal's copy, unchanged
    state = await agent.state(response.run_id)  # folded from what SQLite reads back
    [asked] = [m for m in state.messages if m.tool_calls]
    assert asked.parts == KEPT
    await store.close()


def test_chat_completions_never_receives_thinking() -> None:
    message = Message(role=Role.ASSISTANT, content="Checking.", parts=KEPT)
    wire, media = wire_message(message)
    assert wire == {"role": "assistant", "content": "Checking."}
    assert media == []
