"""`"provider:name"` strings resolve to the right model, pointed at the right server, with the right key."""

from __future__ import annotations

from typing import Any

import pytest

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Message
from eudaimon.models import ChatRequest, infer_model
from eudaimon.models.anthropic import AnthropicModel
from eudaimon.models.openai import OpenAIModel


def ask() -> ChatRequest:
    return ChatRequest([Message.user("hi")], max_tokens=20)


async def test_ollama_defaults_to_localhost(closing, monkeypatch):
    """`ollama:NAME` is an OpenAIModel on http://localhost:11434/v1 that needs no key."""
    monkeypatch.delenv("OLLAMA_BASE_URL")
    model = closing(infer_model("ollama:llama3.2"))
    assert isinstance(model, OpenAIModel)
    assert model.model_id == "llama3.2"
    assert model.provider == "ollama"
    assert "http://localhost:11434/v1" in repr(model)


async def test_ollama_base_url_env_is_used_and_openai_key_is_not_sent(openai_server, closing, monkeypatch):
    """OLLAMA_BASE_URL points `ollama:` at another server (/v1 added when it names only the host),
    requests carry max_tokens (what Ollama reads), and an OPENAI_API_KEY in the environment is
    never sent to a server that is not OpenAI."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-do-not-leak")
    monkeypatch.setenv("OLLAMA_BASE_URL", f"http://127.0.0.1:{openai_server.port}")
    model = closing(infer_model("ollama:qwen3"))
    openai_server.reply(openai_server.completion("hello from ollama", model="qwen3:latest"))
    response = await model.generate(ask())
    assert (response.text(), response.model) == ("hello from ollama", "qwen3:latest")
    [sent] = openai_server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["max_tokens"] == 20
    assert "max_completion_tokens" not in sent.body
    assert "sk-real-openai-key" not in sent.headers.get("authorization", "")


async def test_openai_compatible_needs_a_base_url(openai_server, closing):
    """`openai-compatible:NAME` without a base URL is a configuration error naming the fix; with
    one it talks to that server and sends the given key (or none at all)."""
    with pytest.raises(ConfigurationError, match="base_url"):
        infer_model("openai-compatible:mistral")
    model = closing(infer_model("openai-compatible:mistral", base_url=openai_server.url, api_key="sk-vllm-123456"))
    assert model.provider == "openai-compatible"
    openai_server.reply(openai_server.completion("hi from vllm"))
    assert (await model.generate(ask())).text() == "hi from vllm"
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-vllm-123456"
    assert openai_server.requests[0].body["model"] == "mistral"
    assert "sk-vllm" not in repr(model)


async def test_openai_string_reads_the_key_from_the_environment(closing, monkeypatch):
    """`openai:NAME` without a key is a configuration error naming OPENAI_API_KEY; with the variable
    set it builds, and its repr does not show the key."""
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        infer_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-0123456789")
    model = closing(infer_model("openai:gpt-4o-mini"))
    assert isinstance(model, OpenAIModel)
    assert model.model_id == "gpt-4o-mini"
    assert "sk-from-env" not in repr(model)


async def test_openai_sends_max_completion_tokens(openai_server, closing):
    """OpenAI itself gets max_completion_tokens: its reasoning models refuse max_tokens."""
    model = closing(infer_model("openai:gpt-4o-mini", api_key="sk-x", base_url=openai_server.url))
    openai_server.reply(openai_server.completion("ok"))
    await model.generate(ask())
    assert openai_server.requests[0].body["max_completion_tokens"] == 20


async def test_anthropic_string(anthropic_server, closing, monkeypatch, tmp_path):
    """`anthropic:NAME` builds an AnthropicModel; without credentials it is a configuration error
    naming ANTHROPIC_API_KEY."""
    monkeypatch.setenv("HOME", str(tmp_path))  # no SDK profile on disk either
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        infer_model("anthropic:claude-haiku-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-0123456789")
    model = closing(infer_model("anthropic:claude-haiku-4-5", base_url=anthropic_server.url))
    assert isinstance(model, AnthropicModel)
    assert model.model_id == "claude-haiku-4-5"
    anthropic_server.reply(anthropic_server.message([{"type": "text", "text": "hi"}]))
    assert (await model.generate(ask())).text() == "hi"
    assert "sk-ant-env" not in repr(model)


def test_anthropic_broken_sdk_profile_is_a_configuration_error(monkeypatch, tmp_path):
    """A configured but missing SDK profile is reported as a configuration error at build time."""
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        infer_model("anthropic:claude-haiku-4-5")


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", "ollama:llama3.2"])
def test_unknown_options_are_configuration_errors(spec: str) -> None:
    """A misspelt option is reported with the known ones, not swallowed."""
    with pytest.raises(ConfigurationError, match="known"):
        infer_model(spec, api_kee="sk-x")


def test_prebuilt_client_is_used_without_sdk_retries() -> None:
    """A client passed in is used with max_retries=0, whatever it was built with."""
    import openai

    client = openai.AsyncOpenAI(api_key="sk-x", base_url="http://127.0.0.1:9/v1", max_retries=5)
    model: Any = OpenAIModel("gpt-x", client=client)
    assert model._client.max_retries == 0
    assert client.max_retries == 5


async def test_ollama_not_running_is_unavailable_and_says_where(closing):
    """A local server that is not running is ModelUnavailable (retryable) naming the URL tried."""
    from eudaimon.core.errors import ModelUnavailable

    model = closing(infer_model("ollama:llama3.2"))  # the suite points OLLAMA_BASE_URL at a closed port
    with pytest.raises(ModelUnavailable, match=r"127\.0\.0\.1:9/v1.*is the server running"):
        await model.generate(ask())
