"""FallbackModel: the next model answers on a retryable failure, and says that it did."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from eudaimon.core.errors import ConfigurationError, ContextTooLong, ModelRequestRejected, ModelUnavailable
from eudaimon.core.messages import Message
from eudaimon.models import ChatRequest, ChatResponse, ModelStreamItem, ScriptedModel
from eudaimon.models.anthropic import AnthropicModel
from eudaimon.models.fallback import FallbackModel
from eudaimon.models.openai import OpenAIModel
from eudaimon.streaming import TextDelta


async def drain(items: Any, into: list[Any]) -> None:
    """Append every item of a stream to `into`, so what arrived before a failure can be checked."""
    async for item in items:
        into.append(item)


def ask() -> ChatRequest:
    return ChatRequest([Message.user("hi")])


@pytest.fixture
def pair(openai_server: Any, anthropic_server: Any, closing: Any) -> FallbackModel:
    primary = OpenAIModel("gpt-primary", api_key="sk-a", base_url=openai_server.url, timeout=5.0)
    secondary = AnthropicModel("claude-backup", api_key="sk-b", base_url=anthropic_server.url, timeout=5.0)
    return closing(FallbackModel([primary, secondary]))


async def test_falls_back_on_503_and_names_the_serving_model(pair, openai_server, anthropic_server):
    """A 503 from the primary passes the request to the secondary; the model id stays the primary's
    while the response names the model that served (so cost is priced at it)."""
    openai_server.reply(openai_server.error(503, "Service Unavailable", type="server_error"))
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "from backup"}], model="claude-backup-1"))
    response = await pair.generate(ask())
    assert response.text() == "from backup"
    assert response.model == "claude-backup-1"
    assert pair.model_id == "gpt-primary"
    assert len(openai_server.requests) == 1
    assert len(anthropic_server.requests) == 1


async def test_primary_serves_when_healthy(pair, openai_server, anthropic_server):
    """No failure, no fallback: the secondary is never called."""
    openai_server.reply(openai_server.completion("from primary", model="gpt-primary-1"))
    response = await pair.generate(ask())
    assert (response.text(), response.model) == ("from primary", "gpt-primary-1")
    assert anthropic_server.requests == []


@pytest.mark.parametrize(
    ("status", "message", "error"),
    [
        (400, "This model's maximum context length is 8192 tokens.", ContextTooLong),
        (401, "Incorrect API key provided", ModelRequestRejected),
    ],
)
async def test_non_retryable_failures_do_not_fall_back(pair, openai_server, anthropic_server, status, message, error):
    """Only retryable failures fall back: a context that is too long or a refused key is raised
    for the runtime to handle, and the secondary is not called."""
    code = "context_length_exceeded" if error is ContextTooLong else "invalid_api_key"
    openai_server.reply(openai_server.error(status, message, code=code))
    with pytest.raises(error):
        await pair.generate(ask())
    assert anthropic_server.requests == []


async def test_all_failing_raises_the_last_retryable_error(pair, openai_server, anthropic_server):
    """When every model fails the last error is raised, still retryable so the runtime can retry
    the chain, with the earlier failures attached as notes."""
    openai_server.reply(openai_server.error(500, "boom", type="server_error"))
    anthropic_server.reply(anthropic_server.error(529, "Overloaded", type="overloaded_error"))
    with pytest.raises(ModelUnavailable) as caught:
        await pair.generate(ask())
    assert caught.value.status_code == 529
    assert any("500" in note for note in caught.value.__notes__)


async def test_stream_falls_back_before_any_delta(pair, openai_server, anthropic_server):
    """A stream that fails before yielding anything falls back to the next model's stream."""
    openai_server.reply(openai_server.error(503, "Service Unavailable", type="server_error"))
    a = anthropic_server
    a.reply(a.stream([a.message_start(model="claude-backup-1"), *a.text_block(0, ["Hi"]), *a.message_end()]))
    items = [item async for item in pair.stream(ask())]
    assert items[:-1] == [TextDelta("Hi")]
    assert isinstance(items[-1], ChatResponse)
    assert items[-1].model == "claude-backup-1"


class _BreaksAfterOneDelta:
    """A model whose stream shows some text, then fails as if the connection dropped."""

    model_id = "flaky"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        raise ModelUnavailable("down", model="flaky")

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        yield TextDelta("partial")
        raise ModelUnavailable("dropped", model="flaky")


async def test_stream_does_not_fall_back_after_a_delta():
    """Text already yielded cannot be taken back: a failure after a delta is raised, not hidden
    behind another model's answer."""
    backup = ScriptedModel(["from backup"], model_id="backup")
    model = FallbackModel([_BreaksAfterOneDelta(), backup])
    seen: list[Any] = []
    with pytest.raises(ModelUnavailable, match="dropped"):
        await drain(model.stream(ask()), seen)
    assert seen == [TextDelta("partial")]
    assert backup.requests == []


async def test_serving_model_is_named_even_when_the_model_does_not():
    """A model that leaves ChatResponse.model empty is named by its model_id when it serves."""
    model = FallbackModel([_BreaksAfterOneDelta(), ScriptedModel(["ok"], model_id="backup")])
    response = await model.generate(ask())
    assert (response.text(), response.model) == ("ok", "backup")
    assert model.model_id == "flaky"


async def test_needs_a_model_and_hides_keys_in_repr(closing):
    """An empty chain is a configuration error; the repr lists the models without their keys."""
    with pytest.raises(ConfigurationError):
        FallbackModel([])
    primary = OpenAIModel("gpt-x", api_key="sk-secret-123456", base_url="http://127.0.0.1:9/v1")
    model = closing(FallbackModel([primary]))
    assert "sk-secret" not in repr(model)
    assert "gpt-x" in repr(model)
