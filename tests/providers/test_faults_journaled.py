"""Provider faults, end to end: a real Agent run on OpenAIModel against a fake server, and what
its journal records. The model classifies; the runtime retries, shrinks the context or fails,
and writes down each decision."""

from __future__ import annotations

from typing import Any

import pytest

from eudaimon import Agent
from eudaimon.core.errors import ModelRequestRejected, RunFailedError
from eudaimon.core.messages import Message
from eudaimon.models.fallback import FallbackModel
from eudaimon.models.openai import OpenAIModel


def events_of(events: list[Any], type_: str) -> list[Any]:
    return [e.data for e in events if e.type == type_]


@pytest.fixture
def model(openai_server: Any, openai_key: str, closing: Any) -> OpenAIModel:
    return closing(OpenAIModel("gpt-test", api_key=openai_key, base_url=openai_server.url, timeout=5.0))


async def test_rate_limit_is_retried_after_retry_after_and_journaled(openai_server, model):
    """A 429 then a success: one model_retry_scheduled whose delay honours Retry-After, then the
    run completes with the answer of the second request."""
    openai_server.reply(
        openai_server.error(429, "Rate limit reached", headers={"Retry-After": "1"}),
        openai_server.completion("Hello after waiting"),
    )
    agent = Agent(model=model, store="memory:")
    response = await agent.prompt("hi")
    assert response.text() == "Hello after waiting"
    events = await agent.store.load(response.run_id)
    [retry] = events_of(events, "model_retry_scheduled")
    assert retry.retry_number == 1
    assert retry.delay_ms >= 1000  # the backoff alone would be at most 500 ms
    assert "429" in retry.error
    assert len(events_of(events, "model_called")) == 1
    assert events[-1].type == "run_completed"
    assert len(openai_server.requests) == 2


async def test_server_error_is_retried_and_journaled(openai_server, model):
    """A 500 then a success: a model_retry_scheduled, then completion."""
    openai_server.reply(
        openai_server.error(500, "The server had an error", type="server_error"),
        openai_server.completion("Recovered"),
    )
    agent = Agent(model=model, store="memory:")
    response = await agent.prompt("hi")
    assert response.text() == "Recovered"
    events = await agent.store.load(response.run_id)
    [retry] = events_of(events, "model_retry_scheduled")
    assert "500" in retry.error
    assert events[-1].type == "run_completed"


async def test_unauthorized_fails_the_run_at_once(openai_server, model, openai_key):
    """A 401 is not retried: the run fails after one request, with no retry journaled and no key
    anywhere in the journal or the error."""

    def echo_key(request: Any) -> Any:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        return openai_server.error(401, f"Incorrect API key provided: {sent}", code="invalid_api_key")

    openai_server.reply(echo_key)
    agent = Agent(model=model, store="memory:")
    with pytest.raises((RunFailedError, ModelRequestRejected)) as caught:
        await agent.prompt("hi", run_id="run-401")
    assert openai_key not in str(caught.value)
    events = await agent.store.load("run-401")
    assert events_of(events, "model_retry_scheduled") == []
    assert events[-1].type == "run_failed"
    assert "OPENAI_API_KEY" in events[-1].data.error
    assert openai_key not in repr(events)
    assert len(openai_server.requests) == 1


async def test_context_rejection_shrinks_the_next_request(openai_server, model):
    """A context-length 400 journals model_context_rejected, and the request sent next carries
    fewer messages (the oldest turns dropped), after which the run completes."""
    message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."
    openai_server.reply(
        openai_server.error(400, message, code="context_length_exceeded"),
        openai_server.completion("Short answer"),
    )
    filler = "lorem ipsum dolor sit amet " * 40
    history = [
        Message.system("Be brief."),
        Message.user(f"first question {filler}"),
        Message.assistant(f"first answer {filler}"),
        Message.user(f"second question {filler}"),
        Message.assistant(f"second answer {filler}"),
        Message.user("third question"),
    ]
    agent = Agent(model=model, store="memory:")
    response = await agent.prompt_with_messages(history)
    assert response.text() == "Short answer"
    events = await agent.store.load(response.run_id)
    [rejected] = events_of(events, "model_context_rejected")
    assert "context" in rejected.error
    first, second = (r.body["messages"] for r in openai_server.requests)
    assert len(second) < len(first)
    assert second[0] == {"role": "system", "content": "Be brief."}
    assert second[-1] == {"role": "user", "content": "third question"}


async def test_fallback_run_names_the_secondary_model(openai_server, closing):
    """When the primary answers 503, the secondary serves, and the run's model_called names the
    secondary (the model the call is priced at); nothing is retried."""
    primary = OpenAIModel("gpt-primary", api_key="sk-a", base_url=openai_server.url, timeout=5.0)
    secondary = OpenAIModel("gpt-secondary", api_key="sk-b", base_url=openai_server.url, timeout=5.0)
    openai_server.reply(
        openai_server.error(503, "Service Unavailable", type="server_error"),
        lambda request: openai_server.completion("from the backup", model=request.body["model"]),
    )
    agent = Agent(model=closing(FallbackModel([primary, secondary])), store="memory:")
    response = await agent.prompt("hi")
    assert response.text() == "from the backup"
    events = await agent.store.load(response.run_id)
    [called] = events_of(events, "model_called")
    assert called.model == "gpt-secondary"
    assert events_of(events, "model_retry_scheduled") == []
    assert [r.body["model"] for r in openai_server.requests] == ["gpt-primary", "gpt-secondary"]


async def test_streamed_run_with_usage_is_journaled(openai_server, model):
    """A run driven through prompt_stream streams the provider's deltas and journals the usage
    (cached tokens included) that arrived with the stream."""
    c = openai_server.chunk
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 4,
        "total_tokens": 54,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    openai_server.reply(
        openai_server.stream(
            [c({"content": "Str"}), c({"content": "eamed"}), c({}, finish_reason="stop"), c(None, usage=usage)]
        )
    )
    agent = Agent(model=model, store="memory:")
    texts = [e.text for e in [ev async for ev in agent.prompt_stream("hi", run_id="run-stream")] if hasattr(e, "text")]
    assert "".join(texts) == "Streamed"
    events = await agent.store.load("run-stream")
    [called] = events_of(events, "model_called")
    assert (called.usage.input_tokens, called.usage.output_tokens, called.usage.cached_tokens) == (50, 4, 32)
    assert called.model == "gpt-test-2025"
