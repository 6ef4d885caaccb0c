"""Fixtures for the provider tests: the fake servers of `_fake_providers`, models pointed at
them, and an environment in which nothing can reach a real provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _fake_providers import ANTHROPIC_KEY, CLEARED_ENV, CLOSED_PORT_URL, OPENAI_KEY, FakeAnthropic, FakeOpenAI


@pytest.fixture(autouse=True)
def _no_real_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """No developer key leaks into a test, and an SDK left to its defaults finds a closed port."""
    for name in CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", CLOSED_PORT_URL)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_PORT_URL)
    monkeypatch.setenv("OLLAMA_BASE_URL", CLOSED_PORT_URL + "/v1")


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic()
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def closing() -> AsyncIterator[Callable[[Any], Any]]:
    """`closing(model)` returns the model and closes its HTTP client when the test ends."""
    models: list[Any] = []

    def track(model: Any) -> Any:
        models.append(model)
        return model

    yield track
    for model in models:
        await model.aclose()


@pytest.fixture
def openai_model(openai_server: FakeOpenAI, closing: Callable[[Any], Any]) -> Any:
    from eudaimon.models.openai import OpenAIModel

    return closing(OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=openai_server.url, timeout=5.0))


@pytest.fixture
def anthropic_model(anthropic_server: FakeAnthropic, closing: Callable[[Any], Any]) -> Any:
    from eudaimon.models.anthropic import AnthropicModel

    return closing(AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=anthropic_server.url, timeout=5.0))


@pytest.fixture
def openai_key() -> str:
    return OPENAI_KEY


@pytest.fixture
def anthropic_key() -> str:
    return ANTHROPIC_KEY
