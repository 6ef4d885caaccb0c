"""OpenAIModel against a fake Chat Completions server, through the real `openai` SDK."""

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
from eudaimon.models.openai import OpenAIModel
from eudaimon.streaming import TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart


async def test_text_answer_and_request_shape(openai_server, openai_model, openai_key):
    """A plain answer comes back with its text, usage, stop reason and serving model; the request
    carries the system prompt, temperature and max_tokens, and the SDK does not retry by itself."""
    openai_server.reply(
        openai_server.completion(
            "Hello!",
            usage={
                "prompt_tokens": 12,
                "completion_tokens": 3,
                "total_tokens": 15,
                "prompt_tokens_details": {"cached_tokens": 8},
            },
        )
    )
    request = ChatRequest([Message.system("Be brief."), Message.user("hi")], temperature=0.2, max_tokens=50)
    response = await openai_model.generate(request)

    assert response.text() == "Hello!"
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage == Usage(input_tokens=12, output_tokens=3, cached_tokens=8)
    assert response.model == "gpt-test-2025"
    assert response.message.tool_calls == ()
    [sent] = openai_server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {openai_key}"
    assert sent.headers["x-stainless-retry-count"] == "0"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "temperature": 0.2,
        "max_completion_tokens": 50,
    }


async def test_tools_are_sent_as_function_tools(openai_server, openai_model):
    """ChatRequest.tools reach the provider as function tools whose parameters are the JSON Schema."""
    openai_server.reply(openai_server.completion("ok"))
    await openai_model.generate(ask(tools=[WEATHER]))
    assert openai_server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": WEATHER.description, "parameters": WEATHER.parameters},
        }
    ]


async def test_parallel_tool_calls_keep_ids_and_raw_arguments(openai_server, openai_model):
    """Parallel tool calls keep the provider's ids, and arguments stay the raw JSON string sent,
    even when it is not valid JSON (the runtime reports that to the model)."""
    openai_server.reply(
        openai_server.completion(
            None,
            tool_calls=[
                openai_server.tool_call("call_abc", "get_weather", '{"city": "Paris"}'),
                openai_server.tool_call("call_def", "get_weather", '{"city": "Par'),
            ],
            finish_reason="tool_calls",
        )
    )
    response = await openai_model.generate(ask(tools=[WEATHER]))
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.text() == ""
    assert response.message.tool_calls == (
        ToolCall("call_abc", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_def", "get_weather", '{"city": "Par'),
    )


@pytest.mark.parametrize(
    ("finish_reason", "stop"),
    [
        ("stop", StopReason.END_TURN),
        ("length", StopReason.MAX_TOKENS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("tool_calls", StopReason.TOOL_USE),
    ],
)
async def test_finish_reasons_are_mapped(openai_server, openai_model, finish_reason, stop):
    """Each provider finish_reason maps to one StopReason."""
    openai_server.reply(openai_server.completion("x", finish_reason=finish_reason))
    assert (await openai_model.generate(ask())).stop_reason is stop


async def test_refusal_is_a_refusal(openai_server, openai_model):
    """A refusal is reported as StopReason.REFUSAL with the refusal text as the answer."""
    openai_server.reply(openai_server.completion(None, refusal="I can't help with that."))
    response = await openai_model.generate(ask())
    assert response.stop_reason is StopReason.REFUSAL
    assert response.text() == "I can't help with that."


async def test_stream_text_with_usage_and_cached_tokens(openai_server, openai_model):
    """A stream yields text deltas as they arrive and the complete response last, with the usage
    (cached tokens included) that only arrives because include_usage was requested."""
    c = openai_server.chunk
    openai_server.reply(
        openai_server.stream(
            [
                c({"role": "assistant", "content": ""}),
                c({"content": "Hel"}),
                c({"content": "lo"}),
                c({}, finish_reason="stop"),
                c(
                    None,
                    usage={
                        "prompt_tokens": 100,
                        "completion_tokens": 7,
                        "total_tokens": 107,
                        "prompt_tokens_details": {"cached_tokens": 80},
                    },
                ),
            ]
        )
    )
    deltas, response = await collect(openai_model, ask())
    assert deltas == [TextDelta("Hel"), TextDelta("lo")]
    assert response.text() == "Hello"
    assert response.usage == Usage(input_tokens=100, output_tokens=7, cached_tokens=80)
    assert response.stop_reason is StopReason.END_TURN
    assert response.model == "gpt-test-2025"
    body = openai_server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_stream_parallel_tool_calls_by_index(openai_server, openai_model):
    """Parallel tool calls stream as index-keyed deltas: each call starts with its real id and
    name, its argument pieces follow, all end at finish_reason, and the response keeps the raw
    argument strings in index order."""
    c = openai_server.chunk

    def call(index: int, **fields: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, **fields}]}

    openai_server.reply(
        openai_server.stream(
            [
                c({"role": "assistant", "content": None}),
                c(call(0, id="call_A", type="function", function={"name": "get_weather", "arguments": ""})),
                c(call(0, function={"arguments": '{"city": '})),
                c(call(1, id="call_B", type="function", function={"name": "get_time", "arguments": ""})),
                c(call(0, function={"arguments": '"Paris"}'})),
                c(call(1, function={"arguments": "{}"})),
                c({}, finish_reason="tool_calls"),
                c(None, usage={"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}),
            ]
        )
    )
    deltas, response = await collect(openai_model, ask(tools=[WEATHER]))
    assert deltas == [
        ToolCallStart("call_A", "get_weather"),
        ToolCallDelta("call_A", '{"city": '),
        ToolCallStart("call_B", "get_time"),
        ToolCallDelta("call_A", '"Paris"}'),
        ToolCallDelta("call_B", "{}"),
        ToolCallEnd("call_A"),
        ToolCallEnd("call_B"),
    ]
    assert response.stop_reason is StopReason.TOOL_USE
    assert response.message.tool_calls == (
        ToolCall("call_A", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_B", "get_time", "{}"),
    )
    assert response.usage == Usage(20, 9, 0)


async def test_rate_limit_is_classified_with_retry_after(openai_server, openai_model):
    """A 429 is ModelRateLimited carrying Retry-After in seconds, raised after ONE request: the
    SDK's own retries are off, so the runtime can journal each retry."""
    openai_server.reply(
        openai_server.error(429, "Rate limit reached", type="requests", headers={"Retry-After": "7"}),
        openai_server.completion("never asked for"),
    )
    with pytest.raises(ModelRateLimited) as caught:
        await openai_model.generate(ask())
    assert caught.value.retry_after_s == 7.0
    assert caught.value.status_code == 429
    assert caught.value.model == "gpt-test"
    assert len(openai_server.requests) == 1


async def test_rate_limit_retry_after_ms_wins(openai_server, openai_model):
    """retry-after-ms, more precise than Retry-After, is honoured first."""
    headers = {"retry-after-ms": "1500", "Retry-After": "2"}
    openai_server.reply(openai_server.error(429, "slow down", headers=headers))
    with pytest.raises(ModelRateLimited) as caught:
        await openai_model.generate(ask())
    assert caught.value.retry_after_s == 1.5


async def test_quota_exhausted_is_not_retried(openai_server, openai_model):
    """A 429 for an exhausted quota will not pass by waiting: it is ModelRequestRejected."""
    openai_server.reply(openai_server.error(429, "You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(ModelRequestRejected, match="billing"):
        await openai_model.generate(ask())


async def test_server_error_is_unavailable(openai_server, openai_model):
    """A 500 is ModelUnavailable (retryable), after a single request."""
    openai_server.reply(openai_server.error(500, "The server had an error", type="server_error"))
    with pytest.raises(ModelUnavailable) as caught:
        await openai_model.generate(ask())
    assert caught.value.status_code == 500
    assert caught.value.retryable
    assert len(openai_server.requests) == 1


async def test_malformed_json_body_is_invalid_response(openai_server, openai_model):
    """A 200 whose body is not JSON is ModelResponseInvalid, not a crash."""
    openai_server.reply(openai_server.raw(b'{"id": "chatcmpl-1", "choices": [{'))
    with pytest.raises(ModelResponseInvalid):
        await openai_model.generate(ask())


async def test_body_without_choices_is_invalid_response(openai_server, openai_model):
    """Valid JSON that is not a completion is ModelResponseInvalid."""
    openai_server.reply(openai_server.json({"id": "x", "object": "chat.completion", "model": "m", "choices": []}))
    with pytest.raises(ModelResponseInvalid):
        await openai_model.generate(ask())


async def test_stream_cut_after_content_is_invalid(openai_server, openai_model):
    """A connection dropped mid-stream after text arrived is ModelResponseInvalid (not retried:
    the text was already shown), and the deltas before the cut were delivered."""
    c = openai_server.chunk
    openai_server.reply(openai_server.stream([c({"content": "Hel"}), c({"content": "lo"})], done=False, cut=True))
    seen: list[Any] = []
    with pytest.raises(ModelResponseInvalid, match="after content"):
        await drain(openai_model.stream(ask()), seen)
    assert seen == [TextDelta("Hel"), TextDelta("lo")]


async def test_stream_ending_without_finish_reason_is_invalid(openai_server, openai_model):
    """A stream that ends cleanly but never said finish_reason was cut short: ModelResponseInvalid."""
    c = openai_server.chunk
    openai_server.reply(openai_server.stream([c({"content": "Hel"})], done=True))
    with pytest.raises(ModelResponseInvalid, match="finish_reason"):
        await collect(openai_model, ask())


async def test_stream_cut_before_content_is_unavailable(openai_server, openai_model):
    """A stream dropped before any delta is ModelUnavailable: nothing was shown, a retry is safe."""
    openai_server.reply(openai_server.stream([], done=False, cut=True))
    with pytest.raises(ModelUnavailable):
        await collect(openai_model, ask())


async def test_invalid_sse_payload_is_invalid_response(openai_server, openai_model):
    """A `data:` line that is not JSON is ModelResponseInvalid."""
    openai_server.reply(openai_server.sse([b"data: {not json\n\n", b"data: [DONE]\n\n"]))
    with pytest.raises(ModelResponseInvalid):
        await collect(openai_model, ask())


async def test_error_event_in_stream_before_content_is_unavailable(openai_server, openai_model):
    """An error the provider reports inside the stream, before any content, is ModelUnavailable."""
    openai_server.reply(openai_server.sse([b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n']))
    with pytest.raises(ModelUnavailable, match="overloaded"):
        await collect(openai_model, ask())


async def test_timeout_is_unavailable(openai_server, closing):
    """A server slower than the client's timeout gives ModelUnavailable, promptly."""
    model = closing(OpenAIModel("gpt-test", api_key="sk-x", base_url=openai_server.url, timeout=0.3))
    slow = openai_server.completion("late")
    slow.delay_s = 3.0
    openai_server.reply(slow)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="timed out"):
        await model.generate(ask())
    assert time.monotonic() - started < 2.0
    assert len(openai_server.requests) == 1


async def test_context_length_error_carries_limits(openai_server, openai_model):
    """A context-length 400 is ContextTooLong with the limit and the requested size parsed."""
    message = (
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130512 tokens. Please reduce the length of the messages."
    )
    openai_server.reply(openai_server.error(400, message, code="context_length_exceeded"))
    with pytest.raises(ContextTooLong) as caught:
        await openai_model.generate(ask())
    assert caught.value.limit_tokens == 128000
    assert caught.value.requested_tokens == 130512
    assert caught.value.status_code == 400


async def test_unauthorized_names_the_variable_and_hides_the_key(openai_server, openai_model, openai_key):
    """A 401 is ModelRequestRejected saying to check OPENAI_API_KEY; neither the error (whose
    provider message echoes the key) nor the model's repr contains the key."""

    def echo_key(request: Any) -> Any:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        return openai_server.error(401, f"Incorrect API key provided: {sent}.", code="invalid_api_key")

    openai_server.reply(echo_key)
    with pytest.raises(ModelRequestRejected) as caught:
        await openai_model.generate(ask())
    error = caught.value
    assert error.status_code == 401
    assert "OPENAI_API_KEY" in str(error)
    for text in (str(error), repr(error), repr(error.args), repr(openai_model), str(error.__cause__)):
        assert openai_key not in text
        assert openai_key[:12] not in text
    assert error.__cause__ is None
    assert error.__suppress_context__


async def test_not_found_names_the_model(openai_server, openai_model):
    """A 404 is ModelRequestRejected telling to check the model name."""
    openai_server.reply(openai_server.error(404, "The model `gpt-test` does not exist", code="model_not_found"))
    with pytest.raises(ModelRequestRejected, match="model name"):
        await openai_model.generate(ask())
