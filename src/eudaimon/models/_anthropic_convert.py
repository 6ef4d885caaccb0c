"""eudaimon messages to the Anthropic Messages API and back, whole or as a stream of events.

The shapes differ from eudaimon's: system prompts are one `system` parameter, tool calls are
`tool_use` blocks whose `input` is an object, and tool results are `tool_result` blocks inside
a user turn, all results of one step in the same turn. The conversion keeps every call id,
every error flag and every argument: a call whose arguments are not a JSON object (a model's
broken JSON, kept raw by the runtime) travels as `{"_raw": "<the text>"}`. Extended thinking's
`thinking` and `redacted_thinking` blocks become `ThinkingPart`s of the assistant message and
go back, unchanged and first, in its turn: the API refuses a tool-use loop that drops them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from anthropic.types import (
    ContentBlockParam,
    DocumentBlockParam,
    ImageBlockParam,
    InputJSONDelta,
    MessageParam,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    RedactedThinkingBlock,
    RedactedThinkingBlockParam,
    SignatureDelta,
    TextBlock,
    TextBlockParam,
    ThinkingBlock,
    ThinkingBlockParam,
    ThinkingDelta,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
)
from anthropic.types import Message as AnthropicMessage
from anthropic.types import TextDelta as AnthropicTextDelta

from eudaimon.core.messages import ContentPart, ImagePart, Message, Role, TextPart, ThinkingPart, ToolCall, Usage
from eudaimon.models._sdk import StreamIncomplete
from eudaimon.models.base import ChatResponse, StopReason, ToolSpec
from eudaimon.streaming import ModelDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

_STOP_REASONS = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "refusal": StopReason.REFUSAL,
    "pause_turn": StopReason.PAUSE_TURN,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
}


Converted = tuple[Literal["system", "user", "assistant"], Sequence[ContentBlockParam], str]
"""One message in the API's terms: its role, its blocks, and (for a system message) its text.
What `AnthropicModel` caches per message, so a step converts only the messages new to it."""


def convert_message(message: Message) -> Converted:
    if message.role is Role.SYSTEM:
        return "system", (), message.content
    return ("assistant" if message.role is Role.ASSISTANT else "user"), tuple(_blocks(message)), ""


def to_anthropic(
    messages: Iterable[Message], convert: Callable[[Message], Converted] = convert_message
) -> tuple[str | None, list[MessageParam]]:
    """`(system, messages)`: system prompts joined by blank lines, and the turns.

    Consecutive turns of one role are merged, so the results of parallel tool calls (and a
    user message after them) form the single user turn the API expects after a `tool_use`.
    `convert` is `convert_message`, or a cache of it: its blocks are copied, never changed.
    """
    system: list[str] = []
    turns: list[tuple[Literal["user", "assistant"], list[ContentBlockParam]]] = []
    for message in messages:
        role, blocks, text = convert(message)
        if role == "system":
            if text:
                system.append(text)
            continue
        if not blocks:
            continue  # the API refuses empty turns; an empty message says nothing
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, list(blocks)))
    wire: list[MessageParam] = []
    for role, blocks in turns:
        if role == "user":
            wire.append({"role": "user", "content": blocks})
        else:
            wire.append({"role": "assistant", "content": blocks})
    return ("\n\n".join(system) or None), wire


def _blocks(message: Message) -> list[ContentBlockParam]:
    if message.role is Role.TOOL:
        result: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        if message.parts:
            result["content"] = [b for b in to_anthropic_parts(message.parts) if b["type"] != "text" or b["text"]]
        elif message.content:
            result["content"] = message.content
        if message.is_error:
            result["is_error"] = True
        return [result]
    if message.parts and message.role is not Role.ASSISTANT:
        return list(to_anthropic_parts(message.parts))  # a user message's parts are all it says
    blocks: list[ContentBlockParam] = list(thinking_blocks(message.parts))
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call)})
    return blocks


def thinking_blocks(parts: Sequence[ContentPart]) -> list[ThinkingBlockParam | RedactedThinkingBlockParam]:
    """An assistant message's thinking, as the API returned it (it checks the signatures)."""
    out: list[ThinkingBlockParam | RedactedThinkingBlockParam] = []
    for part in parts:
        if isinstance(part, ThinkingPart) and part.redacted:
            out.append({"type": "redacted_thinking", "data": part.redacted})
        elif isinstance(part, ThinkingPart):
            out.append({"type": "thinking", "thinking": part.thinking, "signature": part.signature})
    return out


def to_anthropic_parts(parts: Sequence[ContentPart]) -> list[TextBlockParam | ImageBlockParam | DocumentBlockParam]:
    """Content parts as Messages API blocks: text, `image` (base64 or URL source) and
    `document` (PDFs as base64, text documents as a text source)."""
    out: list[TextBlockParam | ImageBlockParam | DocumentBlockParam] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            continue  # an assistant's: `thinking_blocks`
        elif isinstance(part, ImagePart):
            if part.data is None:
                out.append({"type": "image", "source": {"type": "url", "url": part.url or ""}})
            else:
                media = cast(Any, part.media_type)
                data = base64.b64encode(part.data).decode("ascii")
                out.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
        else:
            document: DocumentBlockParam
            if part.media_type.startswith("text/"):
                text = part.data.decode("utf-8", "replace")
                document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
            else:
                data = base64.b64encode(part.data).decode("ascii")
                source: Any = {"type": "base64", "media_type": part.media_type, "data": data}
                document = {"type": "document", "source": source}
            if part.name:
                document["title"] = part.name
            out.append(document)
    return out


def tool_input(call: ToolCall) -> dict[str, object]:
    """A call's arguments as the object `tool_use.input` must be; raw text that is not one is kept in `_raw`."""
    if isinstance(call.arguments, dict):
        return call.arguments
    if not call.arguments.strip():
        return {}
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {"_raw": call.arguments}
    return parsed if isinstance(parsed, dict) else {"_raw": call.arguments}


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[ToolParam]:
    """Tools with their JSON Schema as `input_schema`."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def to_usage(
    input_tokens: int | None, output_tokens: int | None, cache_read: int | None, cache_creation: int | None
) -> Usage:
    """Anthropic's `input_tokens` excludes cache reads and writes; eudaimon's input includes both."""
    read = cache_read or 0
    return Usage(
        input_tokens=(input_tokens or 0) + read + (cache_creation or 0),
        output_tokens=output_tokens or 0,
        cached_tokens=read,
    )


def build_response(
    *,
    text: str,
    calls: Sequence[ToolCall],
    stop_reason: str | None,
    usage: Usage,
    model: str | None,
    msg_id: str,
    thinking: Sequence[ThinkingPart] = (),
) -> ChatResponse:
    """One `ChatResponse`, built the same way from a whole message and from a stream."""
    stop = _STOP_REASONS.get(stop_reason or "end_turn", StopReason.END_TURN)
    extra: dict[str, Any] = {"id": msg_id} if msg_id else {}
    if stop_reason and stop_reason not in _STOP_REASONS:
        extra["stop_reason"] = stop_reason  # a reason newer than this mapping, kept for whoever looks
    message = Message(role=Role.ASSISTANT, content=text, tool_calls=tuple(calls), parts=tuple(thinking))
    return ChatResponse(message, stop, usage, model=model or None, extra=extra)


def from_message(message: AnthropicMessage) -> ChatResponse:
    """The response to a non-streaming request. Tool inputs arrive as objects and stay objects."""
    text: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[ThinkingPart] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking.append(ThinkingPart(thinking=block.thinking, signature=block.signature))
        elif isinstance(block, RedactedThinkingBlock):
            thinking.append(ThinkingPart(redacted=block.data))
        elif isinstance(block, ToolUseBlock):
            arguments = block.input if isinstance(block.input, dict) else json.dumps(block.input)
            calls.append(ToolCall(block.id, block.name, arguments))
    usage = message.usage
    return build_response(
        text="".join(text),
        calls=calls,
        stop_reason=message.stop_reason,
        usage=to_usage(
            usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        ),
        model=message.model,
        msg_id=message.id,
        thinking=thinking,
    )


@dataclass(slots=True)
class _Block:
    kind: Literal["text", "tool_use", "thinking", "redacted_thinking", "other"]
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    start_input: object = None
    signature: str = ""
    stopped: bool = False


@dataclass(slots=True)
class AnthropicStream:
    """Folds `RawMessageStreamEvent`s into deltas as they arrive, and into the final response.

    Tool arguments are the concatenated `input_json_delta` pieces: the raw JSON text the model
    wrote. Thinking is the concatenated `thinking_delta`s with the block's `signature_delta`
    (not shown as text); block kinds eudaimon has no place for are skipped.
    """

    blocks: dict[int, _Block] = field(default_factory=dict)
    msg_id: str = ""
    model: str | None = None
    stop_reason: str | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    started: bool = False
    stopped: bool = False

    def feed(self, event: RawMessageStreamEvent) -> list[ModelDelta]:
        """The deltas one event carries."""
        if self.stopped:
            raise StreamIncomplete(f"event {event.type!r} after message_stop")
        if isinstance(event, RawMessageStartEvent):
            self.started = True
            self.msg_id, self.model = event.message.id, event.message.model
            u = event.message.usage
            self.usage.update(
                input=u.input_tokens,
                output=u.output_tokens,
                read=u.cache_read_input_tokens,
                creation=u.cache_creation_input_tokens,
            )
            return []
        if not self.started:
            raise StreamIncomplete(f"event {event.type!r} before message_start")
        if isinstance(event, RawContentBlockStartEvent):
            return self._start(event)
        if isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        if isinstance(event, RawContentBlockStopEvent):
            block = self.blocks.get(event.index)
            if block is None:
                raise StreamIncomplete(f"content_block_stop for unknown block #{event.index}")
            block.stopped = True
            return [ToolCallEnd(block.id)] if block.kind == "tool_use" else []
        if isinstance(event, RawMessageDeltaEvent):
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            counts = event.usage  # cumulative; absent ones keep message_start's
            for key, value in (
                ("input", counts.input_tokens),
                ("output", counts.output_tokens),
                ("read", counts.cache_read_input_tokens),
                ("creation", counts.cache_creation_input_tokens),
            ):
                if value is not None:
                    self.usage[key] = value
            return []
        if isinstance(event, RawMessageStopEvent):
            self.stopped = True
        return []

    def _start(self, event: RawContentBlockStartEvent) -> list[ModelDelta]:
        content = event.content_block
        if isinstance(content, TextBlock):
            self.blocks[event.index] = _Block("text", parts=[content.text] if content.text else [])
            return [TextDelta(content.text)] if content.text else []
        if isinstance(content, ToolUseBlock):
            self.blocks[event.index] = _Block("tool_use", id=content.id, name=content.name, start_input=content.input)
            return [ToolCallStart(content.id, content.name)]
        if isinstance(content, ThinkingBlock):
            start = [content.thinking] if content.thinking else []
            self.blocks[event.index] = _Block("thinking", parts=start, signature=content.signature)
            return []
        if isinstance(content, RedactedThinkingBlock):
            self.blocks[event.index] = _Block("redacted_thinking", parts=[content.data])
            return []
        self.blocks[event.index] = _Block("other")
        return []

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[ModelDelta]:
        block = self.blocks.get(event.index)
        if block is None:
            raise StreamIncomplete(f"content_block_delta for unknown block #{event.index}")
        delta = event.delta
        if isinstance(delta, AnthropicTextDelta) and block.kind == "text":
            block.parts.append(delta.text)
            return [TextDelta(delta.text)] if delta.text else []
        if isinstance(delta, InputJSONDelta) and block.kind == "tool_use":
            block.parts.append(delta.partial_json)
            return [ToolCallDelta(block.id, delta.partial_json)] if delta.partial_json else []
        if isinstance(delta, ThinkingDelta) and block.kind == "thinking":
            block.parts.append(delta.thinking)
        elif isinstance(delta, SignatureDelta) and block.kind == "thinking":
            block.signature += delta.signature
        return []

    def finish(self) -> ChatResponse:
        """The complete response; raises `StreamIncomplete` if the stream was cut before message_stop."""
        if not self.stopped:
            raise StreamIncomplete("the stream ended before message_stop: it was cut short")
        text: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[ThinkingPart] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                text.extend(block.parts)
            elif block.kind == "thinking":
                thinking.append(ThinkingPart(thinking="".join(block.parts), signature=block.signature))
            elif block.kind == "redacted_thinking":
                thinking.append(ThinkingPart(redacted="".join(block.parts)))
            elif block.kind == "tool_use":
                if not block.stopped:
                    raise StreamIncomplete(f"tool_use block #{index} never stopped")
                raw = "".join(block.parts)
                # A call without parameters may stream no JSON at all: its input is the start's.
                arguments: dict[str, Any] | str = raw
                if not raw.strip() and self.stop_reason != "max_tokens":  # cut before its JSON: "" says so
                    arguments = block.start_input if isinstance(block.start_input, dict) else {}
                calls.append(ToolCall(block.id, block.name, arguments))
        u = self.usage
        return build_response(
            text="".join(text),
            calls=calls,
            stop_reason=self.stop_reason,
            usage=to_usage(u.get("input"), u.get("output"), u.get("read"), u.get("creation")),
            model=self.model,
            msg_id=self.msg_id,
            thinking=thinking,
        )
