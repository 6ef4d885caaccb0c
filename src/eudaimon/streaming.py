"""What `Agent.prompt_stream` yields while a run progresses.

Models stream the first four variants (plus their final `ChatResponse`); the runtime adds tool
results, per-iteration usage, non-fatal errors and `Done`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    id: str
    arguments_delta: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    id: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one iteration; `estimated_cost` is in USD (0 without a cost model)."""

    iteration: int
    input_tokens: int
    output_tokens: int
    estimated_cost: float = 0.0


@dataclass(frozen=True, slots=True)
class Error:
    """A non-fatal problem (a model retry, a rejected answer); the stream goes on."""

    message: str


@dataclass(frozen=True, slots=True)
class Done:
    """The run stopped: completed, failed, or paused awaiting a human."""

    run_id: str = ""
    status: str = ""


ModelDelta = TextDelta | ToolCallStart | ToolCallDelta | ToolCallEnd
StreamEvent = TextDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | ToolResult | Usage | Error | Done

__all__ = [
    "Done",
    "Error",
    "ModelDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolResult",
    "Usage",
]
