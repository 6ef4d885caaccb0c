"""Messages to the wire and back, for both providers: nothing is lost, nothing is reordered.

The fake servers record the exact JSON the SDKs send; a provider's own answer, sent back in
the next request, must reach it as it wrote it.
"""

from __future__ import annotations

import json
from typing import Any

from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ChatRequest, ToolSpec
from eudaimon.models._anthropic_convert import to_anthropic, tool_input

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(text: str = "hi", **kwargs: Any) -> ChatRequest:
    return ChatRequest([Message.user(text)], **kwargs)


async def test_openai_history_reaches_the_wire_without_loss(openai_server, openai_model):
    """Every message kind converts: system, user, assistant text with tool calls (raw string and
    dict arguments), tool results (errors too) in call order; call ids link calls to results."""
    openai_server.reply(openai_server.completion("done"))
    history = [
        Message.system("You are terse."),
        Message.user("Weather in Paris and Rome?"),
        Message.assistant(
            "Checking.",
            [
                ToolCall("call_1", "get_weather", '{"city":"Paris"}'),
                ToolCall("call_2", "get_weather", {"city": "Rome"}),
            ],
        ),
        Message.tool("call_1", "18C"),
        Message.tool("call_2", "no such city", is_error=True),
        Message.assistant(None, [ToolCall("call_3", "get_weather", "{}")]),
        Message.tool("call_3", "ok"),
        Message.user("Thanks"),
    ]
    await openai_model.generate(ChatRequest(history, tools=[WEATHER]))
    assert openai_server.requests[0].body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "no such city"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "content": "ok"},
        {"role": "user", "content": "Thanks"},
    ]


async def test_openai_answer_round_trips_byte_for_byte(openai_server, openai_model):
    """An assistant turn read from the provider, sent back in the next request, is what the provider
    wrote: same call ids, same argument text (spacing included)."""
    calls = [openai_server.tool_call("call_x1", "get_weather", '{ "city" :  "Oslo" }')]
    openai_server.reply(
        openai_server.completion("Let me look.", tool_calls=calls, finish_reason="tool_calls"),
        openai_server.completion("Cold."),
    )
    first = await openai_model.generate(ask("Oslo?", tools=[WEATHER]))
    history = [Message.user("Oslo?"), first.message, Message.tool("call_x1", "-3C")]
    second = await openai_model.generate(ChatRequest(history, tools=[WEATHER]))
    assert second.text() == "Cold."
    sent_back = openai_server.requests[1].body["messages"][1]
    assert sent_back == {"role": "assistant", "content": "Let me look.", "tool_calls": calls}
    assert json.loads(sent_back["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}


async def test_anthropic_history_reaches_the_wire_without_loss(anthropic_server, anthropic_model):
    """Tool calls become tool_use blocks with object inputs (raw text that is not an object is kept
    as {"_raw": ...}); consecutive tool results, with their error flags, and a user message after
    them form ONE user turn; system prompts leave the turns for the `system` parameter."""
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "done"}]))
    history = [
        Message.system("You are terse."),
        Message.user("Weather in Paris and Rome?"),
        Message.assistant(
            "Checking.",
            [
                ToolCall("toolu_1", "get_weather", '{"city":"Paris"}'),
                ToolCall("toolu_2", "get_weather", '{"city": "Ro'),
            ],
        ),
        Message.tool("toolu_1", "18C"),
        Message.tool("toolu_2", "invalid JSON arguments", is_error=True),
        Message.user("Thanks"),
        Message.assistant("You're welcome."),
        Message.user("Bye"),
    ]
    await anthropic_model.generate(ChatRequest(history))
    body = anthropic_server.requests[0].body
    assert body["system"] == "You are terse."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"_raw": '{"city": "Ro'}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "invalid JSON arguments",
                    "is_error": True,
                },
                {"type": "text", "text": "Thanks"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "You're welcome."}]},
        {"role": "user", "content": [{"type": "text", "text": "Bye"}]},
    ]


async def test_anthropic_answer_round_trips(anthropic_server, anthropic_model):
    """A tool-calling turn read from the provider and sent back carries the same blocks: ids,
    names, inputs and text."""
    blocks = [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_r", "name": "get_weather", "input": {"city": "Oslo", "units": ["C"]}},
    ]
    anthropic_server.reply(
        anthropic_server.message(blocks, stop_reason="tool_use"),
        anthropic_server.message([{"type": "text", "text": "Cold."}]),
    )
    first = await anthropic_model.generate(ask("Oslo?", tools=[WEATHER]))
    await anthropic_model.generate(ChatRequest([Message.user("Oslo?"), first.message, Message.tool("toolu_r", "-3C")]))
    sent = anthropic_server.requests[1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": blocks}
    assert sent[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_r", "content": "-3C"}]}


def test_anthropic_skips_empty_turns_and_keeps_tool_input_objects():
    """Empty messages are dropped (the API refuses empty turns), an empty system prompt adds
    nothing, and arguments that are not a JSON object survive as {"_raw": text}."""
    system, turns = to_anthropic(
        [Message.system(""), Message.user("hi"), Message.assistant(""), Message.user("still there?")]
    )
    assert system is None
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "still there?"}]}
    ]
    assert tool_input(ToolCall("c", "t", "")) == {}
    assert tool_input(ToolCall("c", "t", "[1, 2]")) == {"_raw": "[1, 2]"}
    assert tool_input(ToolCall("c", "t", '{"a": 1}')) == {"a": 1}
    assert tool_input(ToolCall("c", "t", {"a": 1})) == {"a": 1}
