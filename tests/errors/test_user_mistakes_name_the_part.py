"""A mistake a user can fix is a `ConfigurationError` naming the class, method, tool or parameter.

Custom models and memories whose methods the loop awaits must be `async def`; written with
`def` they are refused when the Agent is built, not mid-run with Python's bare TypeError. A tool
parameter whose type has no JSON Schema is refused when the tool is made, naming both.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from eudaimon import Agent, Message, tool
from eudaimon.errors import ConfigurationError, EudaimonError
from eudaimon.memory import SlidingWindowMemory
from eudaimon.models import ChatRequest, ChatResponse, ScriptedModel


class SyncModel:
    model_id = "sync"

    def generate(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(message=Message.assistant("hi"))


class SyncStreamModel:
    model_id = "sync-stream"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(message=Message.assistant("hi"))

    def stream(self, request: ChatRequest) -> Iterator[Any]:
        yield ChatResponse(message=Message.assistant("hi"))


class CoroutineStreamModel(SyncStreamModel):
    model_id = "coroutine-stream"

    async def stream(self, request: ChatRequest) -> Any:  # type: ignore[override]
        return ChatResponse(message=Message.assistant("hi"))


class AsyncModel(SyncStreamModel):
    model_id = "async"

    async def stream(self, request: ChatRequest) -> AsyncIterator[Any]:  # type: ignore[override]
        yield ChatResponse(message=Message.assistant("hi"))


@pytest.mark.parametrize(
    ("model", "method"),
    [
        (SyncModel(), "SyncModel.generate"),
        (SyncStreamModel(), "SyncStreamModel.stream"),
        (CoroutineStreamModel(), "CoroutineStreamModel.stream"),
    ],
)
def test_a_model_with_a_sync_method_is_refused_naming_it(model: Any, method: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"{method} must be") as raised:
        Agent(model)
    assert isinstance(raised.value, EudaimonError)
    assert "async def" in str(raised.value)


def test_an_async_model_is_accepted() -> None:
    """The check refuses only what cannot be awaited: the same model, written async, builds and runs."""
    agent = Agent(AsyncModel(), memory=None)
    assert agent.prompt_sync("hello").output == "hi"


def test_an_object_without_generate_is_not_a_model() -> None:
    with pytest.raises(ConfigurationError, match="has no generate method"):
        Agent(object())  # type: ignore[arg-type]


class SyncMemory(SlidingWindowMemory):
    """A window memory whose one method was overridden without `async`."""

    def __init__(self, sync: str) -> None:
        super().__init__(10)
        setattr(self, sync, lambda *args, **kwargs: [])


@pytest.mark.parametrize("method", ["get_messages", "add_message", "clear"])
def test_a_memory_with_a_sync_method_is_refused_naming_it(method: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"SyncMemory\.{method} must be `async def {method}"):
        Agent(ScriptedModel(["hi"]), memory=SyncMemory(method))


def test_an_object_missing_a_memory_method_is_not_a_memory() -> None:
    with pytest.raises(ConfigurationError, match="has no get_messages method"):
        Agent(ScriptedModel(["hi"]), memory=object())  # type: ignore[arg-type]


def test_a_tool_parameter_without_a_json_schema_names_the_tool_and_the_parameter() -> None:
    with pytest.raises(ConfigurationError) as raised:

        @tool
        def send(connection: socket.socket, text: str) -> str:
            """Send text on a connection."""
            return text

    said = str(raised.value)
    assert "tool 'send'" in said
    assert "parameter 'connection'" in said
    assert "socket.socket" in said
    assert "arbitrary_types_allowed" not in said  # pydantic's advice is for its models, not for tools
