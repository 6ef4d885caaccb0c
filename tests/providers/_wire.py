"""What the two providers' wire tests share: a tool spec, a request, and stream collectors."""

from __future__ import annotations

from typing import Any

from eudaimon.core.messages import Message
from eudaimon.models import ChatRequest, ChatResponse, Model, ToolSpec

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def drain(items: Any, into: list[Any]) -> None:
    """Append every item of a stream to `into`, so what arrived before a failure can be checked."""
    async for item in items:
        into.append(item)


def ask(text: str = "hi", **kwargs: Any) -> ChatRequest:
    return ChatRequest([Message.user(text)], **kwargs)


async def collect(model: Model, request: ChatRequest) -> tuple[list[Any], ChatResponse]:
    items = [item async for item in model.stream(request)]
    assert isinstance(items[-1], ChatResponse), "a stream ends with its complete response"
    assert not any(isinstance(i, ChatResponse) for i in items[:-1])
    return items[:-1], items[-1]
