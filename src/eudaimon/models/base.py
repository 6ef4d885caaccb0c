"""The model seam: what the runtime sends a model and what it gets back."""

from __future__ import annotations

from collections.abc import AsyncIterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from eudaimon.core.messages import Message, Usage
from eudaimon.core.messages import ToolSpec as ToolSpec
from eudaimon.core.settings import NO_SETTINGS, ModelSettings
from eudaimon.streaming import ModelDelta


class StopReason(StrEnum):
    """Why a model stopped; providers' reasons are mapped onto these."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    REFUSAL = "refusal"
    CONTENT_FILTER = "content_filter"
    PAUSE_TURN = "pause_turn"
    """The provider paused a long turn (Anthropic's server tools); sending it back continues it."""


OutputMode = Literal["native", "tool", "prompted"]
"""`native`: the provider constrains the answer to the schema; `tool`: the model calls a tool
whose input is the schema; `prompted`: the system prompt asks for JSON of the schema."""

DEFAULT_TOOL_NAME = "final_result"


@dataclass(frozen=True, slots=True)
class StructuredOutput:
    """What a `ChatRequest` asks of a model beyond text: the answer's schema and how to ask
    for it (see `eudaimon.models.output`). Models that declare `output_modes` read it; a
    `prompted` one needs nothing of them, the system prompt carries it."""

    mode: OutputMode
    schema: dict[str, Any]
    name: str = DEFAULT_TOOL_NAME
    description: str | None = None
    strict: bool | None = None


@dataclass(slots=True)
class ChatRequest:
    """One request to a model. Mutable so that middleware can rewrite it before it is sent.

    `messages` may be a `History` that shares the run's messages until it is changed; models
    read it like a list (`list(request.messages)` makes a plain copy).
    """

    messages: MutableSequence[Message]
    tools: Sequence[ToolSpec] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    settings: ModelSettings = field(default_factory=lambda: NO_SETTINGS)
    """Every other setting of the call (top_p, seed, tool_choice, …); `temperature` and
    `max_tokens` above win over the same keys here, so middleware may change them."""
    output: StructuredOutput | None = None
    """The typed answer asked for natively or through a tool; None for text (or prompted JSON)."""


@dataclass(slots=True)
class ChatResponse:
    """A model's answer. A response with tool calls runs them, whatever `stop_reason` says."""

    message: Message
    stop_reason: StopReason = StopReason.END_TURN
    usage: Usage | None = None
    model: str | None = None
    """The model that actually served the call, when it differs from the one asked."""
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return self.message.content


ModelStreamItem = ModelDelta | ChatResponse
"""A streaming model yields deltas as they arrive and its complete `ChatResponse` last."""


@runtime_checkable
class Model(Protocol):
    """A chat model. `generate` answers at once; `stream` yields deltas, then the response.

    Failures are raised as `eudaimon.errors.ModelError` subclasses, classified once by the
    model: the runtime retries `ModelRetryableError`s that arrive before any content.
    """

    @property
    def model_id(self) -> str: ...

    async def generate(self, request: ChatRequest) -> ChatResponse: ...

    def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]: ...


def check_model_settings(model: object, settings: ModelSettings) -> None:
    """Ask `model` whether it can honour `settings` (its optional `check_settings` method).

    Models without the method (test models, your own) take any settings: they see them in
    `ChatRequest.settings`.

    Raises:
        ConfigurationError: the model's provider has no such setting.
    """
    check = getattr(model, "check_settings", None)
    if check is not None and settings != NO_SETTINGS:
        check(settings)
