"""A step converts only the messages new since the last one, and sends what a fresh conversion
sends (issue 20): each model caches every message's wire form, keyed by the message object.

The fake servers record the JSON the SDKs send; the reference is the uncached conversion
(`to_openai_messages`, `to_anthropic`) of the same history.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from eudaimon.core.messages import DocumentPart, ImagePart, Message, TextPart, ToolCall
from eudaimon.models import ChatRequest
from eudaimon.models._anthropic_convert import convert_message, to_anthropic
from eudaimon.models._openai_body import encode_messages, message_cache
from eudaimon.models._openai_convert import to_openai_messages
from eudaimon.models._wire_cache import WireCache
from eudaimon.models.history import History

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.4 a small document"


def varied_history() -> list[Message]:
    """Every kind of message and part, tool results with media (which OpenAI attaches to the
    user turn after a run of tool results), unicode, raw and parsed arguments."""
    return [
        Message.system("You are terse. Ünïcødé ✓", id="m0"),
        Message.user("Weather in Paris and Rome?", id="m1"),
        Message.assistant(
            "Checking.",
            [
                ToolCall("call_1", "get_weather", '{"city":"Paris"}'),
                ToolCall("call_2", "get_weather", {"city": "Rome"}),
            ],
            id="m2",
        ),
        Message.tool(
            "call_1", "18C", id="m3", parts=(TextPart(text="18C"), ImagePart(data=PNG, media_type="image/png"))
        ),
        Message.tool("call_2", "no such city", is_error=True, id="m4"),
        Message.user(
            [
                TextPart(text="Compare these:"),
                ImagePart(url="https://example.invalid/a.png"),
                ImagePart(data=PNG, media_type="image/png"),
                DocumentPart(data=PDF, media_type="application/pdf", name="report.pdf"),
                DocumentPart(data="plain text ✓".encode(), media_type="text/plain"),
            ],
            id="m5",
        ),
        Message.assistant(None, [ToolCall("call_3", "fetch", "{not json")], id="m6"),
        Message.tool("call_3", "", id="m7", parts=(DocumentPart(data=PDF, media_type="application/pdf"),)),
        Message.tool("call_4", "second result of the batch", id="m8"),
        Message.assistant("", id="m9"),
        Message.user("Thanks", id="m10"),
        Message.assistant("Done.", id=""),
    ]


def test_cached_openai_messages_equal_a_fresh_conversion_at_every_length() -> None:
    """Invariant: for every prefix of a varied history, sent step after step through one cache
    (most messages hits), the encoded messages are the uncached conversion's."""
    history = varied_history()
    cache = message_cache()
    for n in range(1, len(history) + 1):
        assert json.loads(encode_messages(history[:n], cache)) == to_openai_messages(history[:n]), n
    assert json.loads(encode_messages(History(history), cache)) == to_openai_messages(history)


def test_cached_anthropic_turns_equal_a_fresh_conversion_at_every_length() -> None:
    """Invariant: as above for Anthropic, whose merge of same-role turns must not change the
    cached blocks of the turn it extends (sent twice, the history converts the same)."""
    history = varied_history()
    cache = WireCache(convert_message, lambda converted: 1)
    for n in range(1, len(history) + 1):
        fresh = to_anthropic(history[:n])
        assert to_anthropic(history[:n], cache.get) == fresh, n
        assert to_anthropic(history[:n], cache.get) == fresh, n


def test_a_message_with_the_same_id_but_other_content_is_not_served_from_the_cache() -> None:
    """Message ids are not unique in the API, and equal messages can encode differently
    (`{"n": 1}` == `{"n": 1.0}`): the cache is keyed by the message object, so neither case
    sends a stale wire form."""
    cache = message_cache()
    first, second = Message.user("first", id="same"), Message.user("second", id="same")
    assert json.loads(encode_messages([first], cache)) == [{"role": "user", "content": "first"}]
    assert json.loads(encode_messages([second], cache)) == [{"role": "user", "content": "second"}]
    whole = Message.assistant(None, [ToolCall("c", "f", {"n": 1})], id="a")
    floated = Message.assistant(None, [ToolCall("c", "f", {"n": 1.0})], id="a")
    assert whole == floated  # equal by value: a cache that compared values would send "1"
    encode_messages([whole], cache)
    sent = json.loads(encode_messages([floated], cache))
    assert sent[0]["tool_calls"][0]["function"]["arguments"] == '{"n": 1.0}'


async def test_an_openai_step_converts_only_the_new_messages(openai_server: Any, openai_model: Any) -> None:
    """Invariant: a run's history grows by a few messages a step; the model converts each
    message once, so its conversion count grows by the new messages only, and the server
    still receives the whole history, as a fresh conversion would send it."""
    history = varied_history()
    run: list[Message] = history[:4]
    streamed = openai_server.stream(
        [openai_server.chunk({"role": "assistant", "content": "ok"}), openai_server.chunk({}, finish_reason="stop")]
    )
    openai_server.reply(openai_server.completion("ok"), openai_server.completion("ok"), streamed)
    await openai_model.generate(ChatRequest(History(run)))
    assert openai_model._messages.conversions == 4
    run.extend(history[4:9])
    await openai_model.generate(ChatRequest(History(run)))
    assert openai_model._messages.conversions == 9
    run.extend(history[9:])
    items = [item async for item in openai_model.stream(ChatRequest(History(run)))]
    assert items, "the stream answered"
    assert openai_model._messages.conversions == len(history)
    for request, length in zip(openai_server.requests, (4, 9, len(history)), strict=True):
        assert request.body["messages"] == json.loads(json.dumps(to_openai_messages(history[:length])))


async def test_an_anthropic_step_converts_only_the_new_messages(anthropic_server: Any, anthropic_model: Any) -> None:
    """Invariant: as for OpenAI; the server receives the uncached conversion's turns."""
    history = varied_history()
    run: list[Message] = history[:5]
    ok = [{"type": "text", "text": "ok"}]
    anthropic_server.reply(anthropic_server.message(ok), anthropic_server.message(ok))
    await anthropic_model.generate(ChatRequest(History(run)))
    assert anthropic_model._messages.conversions == 5
    run.extend(history[5:])
    await anthropic_model.generate(ChatRequest(History(run)))
    assert anthropic_model._messages.conversions == len(history)
    system, turns = to_anthropic(history)
    last = anthropic_server.requests[-1].body
    assert last["system"] == system
    assert last["messages"] == json.loads(json.dumps(turns))


async def test_extra_body_still_wins_over_the_cached_messages(openai_server: Any, openai_model: Any) -> None:
    """`ModelSettings.extra_body` is merged over the request as the SDK merges it, messages too."""
    from eudaimon.core.settings import ModelSettings

    openai_server.reply(openai_server.completion("ok"), openai_server.completion("ok"))
    replaced = [{"role": "user", "content": "from extra_body"}]
    settings = ModelSettings(extra_body={"messages": replaced, "model": "other", "user": "u1"})
    await openai_model.generate(ChatRequest([Message.user("hi")], settings=settings))
    body = openai_server.requests[0].body
    assert (body["messages"], body["model"], body["user"]) == (replaced, "other", "u1")


def test_the_cache_stays_within_its_bounds() -> None:
    """Bounded: however many messages pass, at most `max_entries` are kept and about
    `max_bytes` of wire form; a message larger than the whole cache is converted, not kept."""
    cache = WireCache(lambda m: m.content.encode(), len, max_entries=50, max_bytes=1000)
    for i in range(500):
        cache.get(Message.user(f"message {i:04d}"))
        assert len(cache) <= 50
        assert cache.nbytes <= 1000
    big = Message.user("x" * 5000)
    assert cache.get(big) == big.content.encode()
    assert cache.get(big) == big.content.encode()
    assert cache.conversions == 502
    assert cache.nbytes <= 1000
    with pytest.raises(ValueError, match="room for one entry"):
        WireCache(lambda m: b"", len, max_entries=0)


async def test_a_run_converts_each_message_once_however_many_steps(openai_server: Any, openai_model: Any) -> None:
    """Invariant, through the runtime: the run keeps its messages from step to step, so over a
    run of four model calls on a 40-message history each message sent is converted once (the
    count equals the last request's messages), not once per step."""
    from eudaimon import Agent, tool

    @tool(effect="read")
    async def echo(i: int) -> int:
        """Return `i`.

        Args:
            i: Any integer.
        """
        return i

    calls = [openai_server.tool_call(f"call_{i}", "echo", '{"i": 1}') for i in range(3)]
    openai_server.reply(
        *[openai_server.completion(None, tool_calls=[call], finish_reason="tool_calls") for call in calls],
        openai_server.completion("done"),
    )
    history = [Message.user(f"question {i}") if i % 2 == 0 else Message.assistant(f"answer {i}") for i in range(40)]
    agent = Agent(openai_model, tools=[echo], memory=None)
    response = await agent.prompt("go", message_history=history)
    assert response.output == "done"
    sent = [len(request.body["messages"]) for request in openai_server.requests]
    assert len(sent) == 4 and sent[-1] > sent[0] >= 41
    assert openai_model._messages.conversions == sent[-1]
