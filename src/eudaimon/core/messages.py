"""The conversation vocabulary: messages, tool calls and token usage.

These are plain frozen values. A message's `id` is what memory and threads key on, so it
must be stable: the runtime gives every message an id before it is journaled, and the fold
derives ids for the messages it creates from the run id and the event's seq.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal

from eudaimon.core.quick_init import quick_init

JsonObject = dict[str, Any]


def _from_base64(value: Any) -> Any:
    """Bytes as given; a string is the base64 the journal wrote (JSON has no bytes)."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"content data is not valid base64: {exc}") from None
    return value


def _to_base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class _Base64:
    """How the journal's codec (pydantic) reads and writes `Blob`: a hook pydantic calls while
    it builds the codec, so pydantic is imported then, by pydantic, and never by this module."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic import BeforeValidator, PlainSerializer

        serializer = PlainSerializer(_to_base64, return_type=str, when_used="json")
        return handler.generate_schema(Annotated[bytes, BeforeValidator(_from_base64), serializer])


Blob = Annotated[bytes, _Base64()]
"""Binary content: `bytes` in Python, standard base64 in the journal's JSON."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Text, as one part of a message that also carries images or documents."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """An image, by `url` (the provider fetches it) or inline `data` with its `media_type`.

    Inline data is journaled once per distinct content, however many runs carry it.
    """

    url: str | None = None
    data: Blob | None = None
    media_type: str = ""
    """e.g. `image/png`; required with `data`, optional with `url`."""
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.data is None):
            raise ValueError("ImagePart needs exactly one of url=... or data=...")
        if self.data is not None and not self.media_type.startswith("image/"):
            raise ValueError(f"ImagePart(data=...) needs media_type='image/...', got {self.media_type!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentPart:
    """A document (`application/pdf`, `text/plain`, …) given inline as `data`."""

    data: Blob
    media_type: str
    name: str | None = None
    """A file name some providers show the model."""
    kind: Literal["document"] = "document"

    def __post_init__(self) -> None:
        if not self.media_type:
            raise ValueError("DocumentPart needs a media_type, e.g. 'application/pdf'")


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingPart:
    """A model's reasoning as its provider returned it, kept on the assistant message so that
    the next request sends it back unchanged: Anthropic refuses a tool-use loop whose thinking
    was dropped, and checks each block's `signature`. Never given by users or tools (it is not
    in `PART_TYPES`); providers without such blocks leave it out of their requests.
    """

    thinking: str = ""
    signature: str = ""
    redacted: str = ""
    """A `redacted_thinking` block's encrypted `data`; `thinking` and `signature` are then empty."""
    kind: Literal["thinking"] = "thinking"


def _part_kind(value: Any) -> str:
    return str(value.get("kind", "text")) if isinstance(value, dict) else str(value.kind)


def _with_kind(value: Any, handler: Any) -> Any:
    # The tag is written even when rows leave defaults out: the reader needs it to pick the class.
    out = handler(value)
    return {"kind": value.kind, **out} if isinstance(out, dict) else out


class _ByKind:
    """How the journal's codec (pydantic) reads and writes `ContentPart`: the class is picked
    by `kind`, which is always written. A hook, like `_Base64`, so this module imports no pydantic."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic import Discriminator, Tag, WrapSerializer

        tagged = (
            Annotated[TextPart, Tag("text")]
            | Annotated[ImagePart, Tag("image")]
            | Annotated[DocumentPart, Tag("document")]
            | Annotated[ThinkingPart, Tag("thinking")]
        )
        return handler.generate_schema(Annotated[tagged, Discriminator(_part_kind), WrapSerializer(_with_kind)])


ContentPart = Annotated[TextPart | ImagePart | DocumentPart | ThinkingPart, _ByKind()]
"""One part of a message: `TextPart`, `ImagePart` or `DocumentPart` (what users and tools give),
or a `ThinkingPart` of an assistant message."""

PART_TYPES = (TextPart, ImagePart, DocumentPart)
"""The parts users and tools may give."""


def parts_text(parts: Sequence[ContentPart]) -> str:
    """The text of a message made of parts: its text parts, joined by newlines."""
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def describe_part(part: ContentPart) -> str:
    """A short placeholder for a part that is not text, e.g. `[image image/png, 12.3 KB]`."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ThinkingPart):
        return "[redacted thinking]" if part.redacted else f"[thinking, {len(part.thinking)} characters]"
    if isinstance(part, ImagePart) and part.data is None:
        return f"[image {part.url}]"
    size = len(part.data or b"")
    shown = f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 2**20:.1f} MB"
    return f"[{part.kind} {part.media_type}, {shown}]"


class Role(StrEnum):
    """Who speaks a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool.

    `arguments` is a dict, or the raw JSON string a provider sent, as the model's message
    (`model_called`) keeps it. Every extension point that is handed a call (middleware
    `on_tool_call`, the approval policy, hooks, `pending_approvals`) gets a dict: decoded for
    middleware, then validated against the tool's schema for the rest. Arguments that do not
    decode or validate become an error result the model sees, and reach no decision.
    """

    id: str
    name: str
    arguments: JsonObject | str = field(default_factory=dict)


@quick_init
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


NO_USAGE = Usage()
"""No tokens: one shared value (`Usage` is frozen), the default of every event's `usage`, so that
the events of a step (a tool's result, a model answer that reported nothing) allocate none."""


@quick_init
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
    parts: tuple[ContentPart, ...] = ()
    """Images and documents with the text, in order; empty for a text-only message, whose
    `content` is then all it says. With parts, `content` is their text alone. An assistant
    message's parts are its provider's reasoning (`ThinkingPart`), before its `content`."""

    @classmethod
    def system(cls, text: str, *, id: str = "") -> Message:
        return cls(role=Role.SYSTEM, content=text, id=id)

    @classmethod
    def user(cls, content: str | Sequence[TextPart | ImagePart | DocumentPart], *, id: str = "") -> Message:
        """A user message: text, or a list of parts (`TextPart`, `ImagePart`, `DocumentPart`)."""
        if isinstance(content, str):
            return cls(role=Role.USER, content=content, id=id)
        parts = tuple(content)
        for part in parts:
            if not isinstance(part, PART_TYPES):
                raise TypeError(
                    f"a message part must be a TextPart, ImagePart or DocumentPart, got {type(part).__name__}"
                )
        return cls(role=Role.USER, content=parts_text(parts), parts=parts, id=id)

    @classmethod
    def assistant(
        cls, text: str | None = None, tool_calls: tuple[ToolCall, ...] | list[ToolCall] = (), *, id: str = ""
    ) -> Message:
        return cls(role=Role.ASSISTANT, content=text or "", tool_calls=tuple(tool_calls), id=id)

    @classmethod
    def tool(
        cls,
        call_id: str,
        content: str,
        is_error: bool = False,
        *,
        id: str = "",
        parts: tuple[ContentPart, ...] = (),
    ) -> Message:
        return cls(role=Role.TOOL, content=content, tool_call_id=call_id, is_error=is_error, id=id, parts=parts)

    @property
    def text(self) -> str:
        return self.content


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: `parameters` is its JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
