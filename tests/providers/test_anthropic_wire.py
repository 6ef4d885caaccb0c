"""AnthropicModel against a fake Messages API server, through the real `anthropic` SDK."""

from __future__ import annotations

import time
from typing import Any

import pytest
from _wire import WEATHER, ask, collect, drain

from eudaimon.core.errors import (
    ContextTooLong,
    ModelRateLimited,
    ModelRequestRejected,
    ModelResponseInvalid,
    ModelUnavailable,
)
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.models import ChatRequest, StopReason
from eudaimon.models.anthropic import AnthropicModel
from eudaimon.streaming import TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart


async def test_text_answer_and_request_shape(anthropic_server, anthropic_model):
    """A text answer comes back with usage, stop reason and serving model; every system message
    goes into the one `system` parameter, max_tokens defaults to 4096, temperature is sent, and
    the SDK does not retry by itself."""
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "Hello!"}]))
    request = ChatRequest(
        [Message.system("Be brief."), Message.system("Answer in English."), Message.user("hi")], temperature=0.3
    )
    response = await anthropic_model.generate(request)

    assert response.text() == "Hello!"
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage == Usage(input_tokens=10, output_tokens=5, cached_tokens=0)
    assert response.model == "claude-test-2025"
    [sent] = anthropic_server.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-stainless-retry-count"] == "0"
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Be brief.\n\nAnswer in English.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "temperature": 0.3,
    }


async def test_request_max_tokens_and_tools(anthropic_server, anthropic_model):
    """A request's max_tokens wins over the default; tools carry their schema as input_schema."""
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "ok"}]))
    await anthropic_model.generate(ask(max_tokens=100, tools=[WEATHER]))
    body = anthropic_server.requests[0].body
    assert body["max_tokens"] == 100
    assert body["tools"] == [
        {"name": "get_weather", "description": WEATHER.description, "input_schema": WEATHER.parameters}
    ]
    assert "system" not in body
    assert "temperature" not in body


async def test_usage_counts_cache_reads_and_writes_as_input(anthropic_server, anthropic_model):
    """Anthropic's input_tokens excludes the cache: eudaimon's input is input + cache reads +
    cache writes, and cached_tokens is the reads."""
    usage = {"input_tokens": 20, "output_tokens": 5, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 80}
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "ok"}], usage=usage))
    response = await anthropic_model.generate(ask())
    assert response.usage == Usage(input_tokens=1000, output_tokens=5, cached_tokens=900)


async def test_parallel_tool_use_blocks(anthropic_server, anthropic_model):
    """tool_use blocks become tool calls with the provider's ids and inputs, text kept alongside."""
    anthropic_server.reply(
        anthropic_server.message(
            [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
            stop_reason="tool_use",
        )
    )
    response = await anthropic_model.generate(ask(tools=[WEATHER]))
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.text() == "Checking both."
    assert response.message.tool_calls == (
        ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
        ToolCall("toolu_2", "get_weather", {"city": "Rome"}),
    )


@pytest.mark.parametrize(
    ("stop_reason", "stop"),
    [
        ("end_turn", StopReason.END_TURN),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("stop_sequence", StopReason.STOP_SEQUENCE),
        ("refusal", StopReason.REFUSAL),
        ("tool_use", StopReason.TOOL_USE),
    ],
)
async def test_stop_reasons_are_mapped(anthropic_server, anthropic_model, stop_reason, stop):
    """Each Anthropic stop_reason maps to one StopReason."""
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "x"}], stop_reason=stop_reason))
    assert (await anthropic_model.generate(ask())).stop_reason is stop


async def test_stream_text_and_tool_call_with_cached_usage(anthropic_server, anthropic_model):
    """A stream yields text deltas, then the tool call's start, its input_json_delta pieces and its
    end, and last the response: raw argument text, usage with cache reads counted as input."""
    a = anthropic_server
    start_usage = {"input_tokens": 30, "output_tokens": 1, "cache_read_input_tokens": 500}
    a.reply(
        a.stream(
            [
                a.message_start(usage=start_usage),
                *a.text_block(0, ["Let me ", "check."]),
                *a.tool_block(1, "toolu_9", "get_weather", ['{"city": ', '"Paris"}']),
                *a.message_end("tool_use", output_tokens=42),
            ]
        )
    )
    deltas, response = await collect(anthropic_model, ask(tools=[WEATHER]))
    assert deltas == [
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallStart("toolu_9", "get_weather"),
        ToolCallDelta("toolu_9", '{"city": '),
        ToolCallDelta("toolu_9", '"Paris"}'),
        ToolCallEnd("toolu_9"),
    ]
    assert response.text() == "Let me check."
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.tool_calls == (ToolCall("toolu_9", "get_weather", '{"city": "Paris"}'),)
    assert response.usage == Usage(input_tokens=530, output_tokens=42, cached_tokens=500)
    assert response.model == "claude-test-2025"
    assert anthropic_server.requests[0].body["stream"] is True


async def test_stream_call_without_arguments_gets_an_empty_object(anthropic_server, anthropic_model):
    """A parameterless call may stream no JSON at all; its arguments are {} rather than "" (which
    the runtime would report to the model as invalid JSON)."""
    a = anthropic_server
    a.reply(a.stream([a.message_start(), *a.tool_block(0, "toolu_0", "now", []), *a.message_end("tool_use")]))
    _, response = await collect(anthropic_model, ask())
    assert response.message.tool_calls == (ToolCall("toolu_0", "now", {}),)


async def test_rate_limit_is_classified_with_retry_after(anthropic_server, anthropic_model):
    """A 429 is ModelRateLimited with Retry-After parsed, after a single request."""
    anthropic_server.reply(
        anthropic_server.error(
            429, "Number of requests exceeded", type="rate_limit_error", headers={"retry-after": "12"}
        )
    )
    with pytest.raises(ModelRateLimited) as caught:
        await anthropic_model.generate(ask())
    assert caught.value.retry_after_s == 12.0
    assert caught.value.model == "claude-test"
    assert len(anthropic_server.requests) == 1


@pytest.mark.parametrize("status", [500, 503, 529])
async def test_server_errors_are_unavailable(anthropic_server, anthropic_model, status):
    """5xx, Anthropic's 529 overloaded included, are ModelUnavailable."""
    anthropic_server.reply(anthropic_server.error(status, "Overloaded", type="overloaded_error"))
    with pytest.raises(ModelUnavailable) as caught:
        await anthropic_model.generate(ask())
    assert caught.value.status_code == status
    assert len(anthropic_server.requests) == 1


async def test_context_too_long_carries_limits(anthropic_server, anthropic_model):
    """ "prompt is too long: X tokens > N maximum" is ContextTooLong(limit=N, requested=X)."""
    anthropic_server.reply(anthropic_server.error(400, "prompt is too long: 210417 tokens > 200000 maximum"))
    with pytest.raises(ContextTooLong) as caught:
        await anthropic_model.generate(ask())
    assert caught.value.limit_tokens == 200000
    assert caught.value.requested_tokens == 210417


async def test_other_bad_request_is_rejected(anthropic_server, anthropic_model):
    """Any other 400 is ModelRequestRejected, with the provider's reason in the message."""
    anthropic_server.reply(anthropic_server.error(400, "messages: roles must alternate"))
    with pytest.raises(ModelRequestRejected, match="roles must alternate"):
        await anthropic_model.generate(ask())


async def test_unauthorized_names_the_variable_and_hides_the_key(anthropic_server, anthropic_model, anthropic_key):
    """A 401 is ModelRequestRejected saying to check ANTHROPIC_API_KEY; the key echoed by the
    provider appears neither in the error nor in the model's repr."""

    def echo_key(request: Any) -> Any:
        sent = request.headers.get("x-api-key") or request.headers["authorization"].removeprefix("Bearer ")
        return anthropic_server.error(401, f"invalid x-api-key {sent}", type="authentication_error")

    anthropic_server.reply(echo_key)
    with pytest.raises(ModelRequestRejected) as caught:
        await anthropic_model.generate(ask())
    error = caught.value
    assert error.status_code == 401
    assert "ANTHROPIC_API_KEY" in str(error)
    for text in (str(error), repr(error), repr(error.args), repr(anthropic_model)):
        assert anthropic_key not in text
    assert error.__cause__ is None


async def test_malformed_json_body_is_invalid_response(anthropic_server, anthropic_model):
    """A 200 whose body is not JSON is ModelResponseInvalid."""
    anthropic_server.reply(anthropic_server.raw(b'{"id": "msg_1", "content": ['))
    with pytest.raises(ModelResponseInvalid):
        await anthropic_model.generate(ask())


async def test_timeout_is_unavailable(anthropic_server, closing):
    """A server slower than the client's timeout gives ModelUnavailable, promptly."""
    model = closing(AnthropicModel("claude-test", api_key="sk-ant-x", base_url=anthropic_server.url, timeout=0.3))
    slow = anthropic_server.message([{"type": "text", "text": "late"}])
    slow.delay_s = 3.0
    anthropic_server.reply(slow)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="timed out"):
        await model.generate(ask())
    assert time.monotonic() - started < 2.0


async def test_stream_without_message_stop_is_invalid(anthropic_server, anthropic_model):
    """A stream that ends before message_stop was cut short: ModelResponseInvalid."""
    a = anthropic_server
    a.reply(a.stream([a.message_start(), *a.text_block(0, ["Hel"])]))
    with pytest.raises(ModelResponseInvalid, match="message_stop"):
        await collect(anthropic_model, ask())


async def test_stream_connection_cut_after_content_is_invalid(anthropic_server, anthropic_model):
    """A dropped connection after text arrived is ModelResponseInvalid (not retried), and the
    text delivered before the cut was yielded."""
    a = anthropic_server
    a.reply(a.stream([a.message_start(), *a.text_block(0, ["Hel", "lo"])[:2]], cut=True))
    seen: list[Any] = []
    with pytest.raises(ModelResponseInvalid, match="after content"):
        await drain(anthropic_model.stream(ask()), seen)
    assert seen == [TextDelta("Hel")]


async def test_overloaded_event_before_content_is_unavailable(anthropic_server, anthropic_model):
    """An `error` event (overloaded_error) inside a stream, before any content, is ModelUnavailable."""
    a = anthropic_server
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    a.reply(a.stream([a.message_start(), error]))
    with pytest.raises(ModelUnavailable, match="Overloaded") as caught:
        await collect(anthropic_model, ask())
    assert caught.value.status_code == 529


async def test_overloaded_event_after_content_is_invalid(anthropic_server, anthropic_model):
    """The same error event after text was shown is ModelResponseInvalid: a retry would repeat it."""
    a = anthropic_server
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    a.reply(a.stream([a.message_start(), *a.text_block(0, ["Hi"])[:2], error]))
    with pytest.raises(ModelResponseInvalid, match="after content"):
        await collect(anthropic_model, ask())


async def test_invalid_sse_payload_is_invalid_response(anthropic_server, anthropic_model):
    """An event whose data is not JSON is ModelResponseInvalid."""
    anthropic_server.reply(anthropic_server.sse([b"event: message_start\ndata: {oops\n\n"]))
    with pytest.raises(ModelResponseInvalid):
        await collect(anthropic_model, ask())
