"""`FunctionModel`: a model whose answers come from a function of the request."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable

from eudaimon.core.messages import Message
from eudaimon.models._replay import stream_response
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, StopReason

ModelFunction = Callable[[ChatRequest], "ChatResponse | Message | str | Awaitable[ChatResponse | Message | str]"]


class FunctionModel:
    """Calls `fn(request)` (sync or async) for every model call.

    `fn` may return a `ChatResponse`, a `Message` or a string (a final text answer); it may
    raise any `ModelError` to simulate a provider fault.
    """

    __test__ = False

    def __init__(self, fn: ModelFunction, model_id: str = "function", *, chunk_chars: int = 16) -> None:
        self._fn = fn
        self._model_id = model_id
        self._chunk_chars = chunk_chars

    @property
    def model_id(self) -> str:
        return self._model_id

    async def generate(self, request: ChatRequest) -> ChatResponse:
        result = self._fn(request)
        if not isinstance(result, (str, Message, ChatResponse)) and inspect.isawaitable(result):
            result = await result  # an async fn
        if isinstance(result, ChatResponse):
            return result
        message = Message.assistant(result) if isinstance(result, str) else result
        return ChatResponse(message, StopReason.TOOL_USE if message.tool_calls else StopReason.END_TURN)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        response = await self.generate(request)
        async for item in stream_response(response, self._chunk_chars):
            yield item

    def __repr__(self) -> str:
        return f"FunctionModel({getattr(self._fn, '__qualname__', self._fn)!r}, model_id={self._model_id!r})"
