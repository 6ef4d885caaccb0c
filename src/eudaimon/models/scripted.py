"""`ScriptedModel`: plays a list of responses in order. For tests, demos and benchmarks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from eudaimon.core.errors import ModelRequestRejected
from eudaimon.core.messages import Message
from eudaimon.models._replay import stream_response
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, StopReason


class ScriptExhausted(ModelRequestRejected):
    """A `ScriptedModel` was called once more than its script has responses for: the agent made
    a model call the test did not expect. Add the response the call should get, or check why
    the run took another turn."""


class ScriptedModel:
    """A model that answers each call with the next response of its script.

    Responses may be `ChatResponse`s, `Message`s or plain strings (a final text answer).
    Streamed text arrives in several deltas, as it would from a provider.
    """

    __test__ = False

    def __init__(
        self,
        responses: Iterable[ChatResponse | Message | str],
        model_id: str = "scripted",
        *,
        chunk_chars: int = 16,
    ) -> None:
        self._responses = [_as_response(r) for r in responses]
        self._next = 0
        self._model_id = model_id
        self._chunk_chars = chunk_chars
        self.requests: list[ChatRequest] = []
        """Every request received, in order, for tests to inspect."""

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self._next >= len(self._responses):
            raise ScriptExhausted(
                f"ScriptedModel {self._model_id!r} ran out of responses after {len(self._responses)} call(s); "
                "add a response to its script for every model call the run makes",
                model=self._model_id,
            )
        response = self._responses[self._next]
        self._next += 1
        return response

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        response = await self.generate(request)
        async for item in stream_response(response, self._chunk_chars):
            yield item

    def __repr__(self) -> str:
        return f"ScriptedModel(model_id={self._model_id!r}, remaining={self.remaining})"


def _as_response(item: ChatResponse | Message | str) -> ChatResponse:
    if isinstance(item, ChatResponse):
        return item
    message = Message.assistant(item) if isinstance(item, str) else item
    return ChatResponse(message, StopReason.TOOL_USE if message.tool_calls else StopReason.END_TURN)
