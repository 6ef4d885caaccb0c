"""The conversation vocabulary: messages, tool calls and token usage.

These are plain frozen values. A message's `id` is what memory and threads key on, so it
must be stable: the runtime gives every message an id before it is journaled, and the fold
derives ids for the messages it creates from the run id and the event's seq.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

JsonObject = dict[str, Any]


class Role(StrEnum):
    """Who speaks a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool.

    `arguments` is a dict, or the raw JSON string a provider sent: it is parsed, and an
    invalid string is reported to the model, only when the call runs.
    """

    id: str
    name: str
    arguments: JsonObject | str = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a model call consumed. `cached_tokens` is the part of the input served from cache."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of a conversation.

    Build them with `Message.system`, `.user`, `.assistant` and `.tool`. Tool calls are kept
    in a tuple so a message can be shared between states without copying.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    id: str = ""
    """Stable identity; empty until the runtime or the fold assigns one."""

    @classmethod
    def system(cls, text: str, *, id: str = "") -> Message:
        return cls(role=Role.SYSTEM, content=text, id=id)

    @classmethod
    def user(cls, text: str, *, id: str = "") -> Message:
        return cls(role=Role.USER, content=text, id=id)

    @classmethod
    def assistant(
        cls, text: str | None = None, tool_calls: tuple[ToolCall, ...] | list[ToolCall] = (), *, id: str = ""
    ) -> Message:
        return cls(role=Role.ASSISTANT, content=text or "", tool_calls=tuple(tool_calls), id=id)

    @classmethod
    def tool(cls, call_id: str, content: str, is_error: bool = False, *, id: str = "") -> Message:
        return cls(role=Role.TOOL, content=content, tool_call_id=call_id, is_error=is_error, id=id)

    @property
    def text(self) -> str:
        return self.content
