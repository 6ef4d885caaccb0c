"""eudaimon messages to OpenAI Chat Completions and back, whole or as a stream of chunks.

Nothing is lost on the way: tool calls keep the provider's ids, and their `arguments` stay the
raw JSON string the model produced (the runtime parses it, and tells the model when it is not
valid JSON), so a history sent back reaches the provider exactly as the provider wrote it.
Chat Completions has no error flag on tool results: an error result travels as its text.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionContentPartParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall
from openai.types.chat.chat_completion_content_part_param import File
from openai.types.chat.chat_completion_message_custom_tool_call import ChatCompletionMessageCustomToolCall

from eudaimon.core.messages import ContentPart, ImagePart, Message, Role, TextPart, ThinkingPart, ToolCall, Usage
from eudaimon.models._sdk import StreamIncomplete
from eudaimon.models.base import ChatResponse, StopReason, ToolSpec
from eudaimon.streaming import ModelDelta, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

_STOP_REASONS = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.CONTENT_FILTER,
}


def to_openai_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """The `messages` parameter: one wire message per eudaimon message, in order.

    A tool message can hold only text in Chat Completions, so the images and documents of
    tool results follow the batch's tool messages as one user message that names their calls.
    """
    wire: list[ChatCompletionMessageParam] = []
    attached: list[ChatCompletionContentPartParam] = []
    for message in messages:
        if attached and message.role is not Role.TOOL:
            wire.append({"role": "user", "content": attached})
            attached = []
        one, media = wire_message(message)
        wire.append(one)
        attached.extend(media)
    if attached:
        wire.append({"role": "user", "content": attached})
    return wire


def wire_message(message: Message) -> tuple[ChatCompletionMessageParam, list[ChatCompletionContentPartParam]]:
    """One message on the wire, and the media a tool result attaches to the user turn after it."""
    if message.role is Role.SYSTEM:
        return {"role": "system", "content": message.content}, []
    if message.role is Role.USER:
        content = to_openai_parts(message.parts) if message.parts else message.content
        return {"role": "user", "content": content}, []
    if message.role is Role.TOOL:
        tool: ChatCompletionMessageParam = {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
        media = [p for p in message.parts if not isinstance(p, TextPart)]
        if not media:
            return tool, []
        intro: ChatCompletionContentPartParam = {
            "type": "text",
            "text": f"Returned by tool call {message.tool_call_id}:",
        }
        return tool, [intro, *to_openai_parts(media)]
    return _assistant(message), []


def to_openai_parts(parts: Sequence[ContentPart]) -> list[ChatCompletionContentPartParam]:
    """Content parts as Chat Completions content: text, `image_url` (a URL or a data URL), and
    `file` for documents (text documents travel as text, which every compatible server reads)."""
    out: list[ChatCompletionContentPartParam] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            url = (part.url or "") if part.data is None else data_url(part.media_type, part.data)
            out.append({"type": "image_url", "image_url": {"url": url}})
        elif isinstance(part, ThinkingPart):
            continue  # another provider's reasoning: Chat Completions has no place for it
        elif part.media_type.startswith("text/"):
            out.append({"type": "text", "text": part.data.decode("utf-8", "replace")})
        else:
            file: File = {
                "type": "file",
                "file": {"file_data": data_url(part.media_type, part.data), "filename": part.name or "document"},
            }
            out.append(file)
    return out


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _assistant(message: Message) -> ChatCompletionAssistantMessageParam:
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": raw_arguments(call)}}
        for call in message.tool_calls
    ]
    # A tool-calling turn without text is sent with null content, as the API returns it.
    return {"role": "assistant", "content": message.content or None, "tool_calls": calls}


def raw_arguments(call: ToolCall) -> str:
    """The arguments as the JSON text a provider expects: a provider's own string passes unchanged."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    """Function tools; a tool's `parameters` is its JSON Schema."""
    return [
        {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
        }
        for tool in tools
    ]


def to_usage(usage: CompletionUsage | None) -> Usage | None:
    """Token usage; `prompt_tokens` already includes the cached part, which is reported apart."""
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens if details is not None else None) or 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0, output_tokens=usage.completion_tokens or 0, cached_tokens=cached
    )


def build_response(
    *,
    text: str,
    refusal: str,
    calls: Sequence[ToolCall],
    finish_reason: str | None,
    usage: Usage | None,
    model: str | None,
    response_id: str | None,
) -> ChatResponse:
    """One `ChatResponse`, built the same way from a whole completion and from a stream."""
    stop = _STOP_REASONS.get(finish_reason or "stop", StopReason.END_TURN)
    if calls and stop is StopReason.END_TURN:
        stop = StopReason.TOOL_USE  # some compatible servers (older Ollama) say "stop" with tool calls
    extra: dict[str, Any] = {}
    if response_id:
        extra["id"] = response_id
    if finish_reason and finish_reason not in _STOP_REASONS:
        extra["finish_reason"] = finish_reason
    if refusal:
        stop = StopReason.REFUSAL
        extra["refusal"] = refusal
        text = text or refusal
    return ChatResponse(Message.assistant(text, tuple(calls)), stop, usage, model=model or None, extra=extra)


def from_completion(completion: ChatCompletion) -> ChatResponse:
    """The response to a non-streaming request (the first choice: eudaimon never asks for more)."""
    if not completion.choices:
        raise StreamIncomplete("the completion has no choices")
    choice = completion.choices[0]
    message = choice.message
    calls: list[ToolCall] = []
    for call in message.tool_calls or ():
        if isinstance(call, ChatCompletionMessageCustomToolCall):
            calls.append(ToolCall(call.id, call.custom.name, call.custom.input))
        else:
            calls.append(
                ToolCall(call.id, call.function.name, _or_empty_object(call.function.arguments, choice.finish_reason))
            )
    return build_response(
        text=message.content or "",
        refusal=message.refusal or "",
        calls=calls,
        finish_reason=choice.finish_reason,
        usage=to_usage(completion.usage),
        model=completion.model,
        response_id=completion.id,
    )


def _or_empty_object(arguments: str | None, finish_reason: str | None) -> str:
    """A call without parameters may come with no arguments at all; "" is not JSON, "{}" is.
    Unless the answer was cut by the token limit: then no arguments means cut before them."""
    if arguments and arguments.strip():
        return arguments
    return "" if finish_reason == "length" else "{}"


@dataclass(slots=True)
class _PendingCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False
    ended: bool = False


@dataclass(slots=True)
class OpenAIStream:
    """Folds `ChatCompletionChunk`s into deltas as they arrive, and into the final response.

    Parallel tool calls arrive interleaved by `index`; a call starts once its name is known and
    all calls end when the choice reports its `finish_reason`.
    """

    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[ModelDelta]:
        """The deltas one chunk carries, in order."""
        self.model = self.model or chunk.model
        self.response_id = self.response_id or chunk.id
        if chunk.usage is not None:
            self.usage = to_usage(chunk.usage)
        out: list[ModelDelta] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                out.append(TextDelta(delta.content))
            if delta.refusal:
                self.refusal.append(delta.refusal)
                out.append(TextDelta(delta.refusal))
            for call in delta.tool_calls or ():
                out.extend(self._feed_call(call))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
                out.extend(self._end_calls())
        return out

    def _feed_call(self, delta: ChoiceDeltaToolCall) -> list[ModelDelta]:
        pending = self.calls.setdefault(delta.index, _PendingCall(delta.index))
        if delta.id and not pending.id:
            pending.id = delta.id
        function = delta.function
        piece = (function.arguments if function is not None else None) or ""
        if function is not None and function.name and not pending.name:
            pending.name = function.name
        if piece:
            pending.arguments.append(piece)
        if pending.started:
            return [ToolCallDelta(pending.id, piece)] if piece else []
        if not pending.name:
            return []
        pending.id = pending.id or f"call_{pending.index}"
        pending.started = True
        out: list[ModelDelta] = [ToolCallStart(pending.id, pending.name)]
        if pending.arguments:
            out.append(ToolCallDelta(pending.id, "".join(pending.arguments)))
        return out

    def _end_calls(self) -> list[ModelDelta]:
        out: list[ModelDelta] = []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if pending.started and not pending.ended:
                pending.ended = True
                out.append(ToolCallEnd(pending.id))
        return out

    def finish(self) -> ChatResponse:
        """The complete response; raises `StreamIncomplete` if the stream was cut before its end."""
        if self.finish_reason is None:
            raise StreamIncomplete("the stream ended before a finish_reason: it was cut short")
        calls: list[ToolCall] = []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if not pending.started:
                raise StreamIncomplete(f"tool call #{index} in the stream never named its function")
            arguments = _or_empty_object("".join(pending.arguments), self.finish_reason)
            calls.append(ToolCall(pending.id, pending.name, arguments))
        return build_response(
            text="".join(self.text),
            refusal="".join(self.refusal),
            calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            model=self.model,
            response_id=self.response_id,
        )
