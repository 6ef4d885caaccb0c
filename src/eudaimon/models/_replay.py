"""Stream a complete response as deltas, for models that only produce whole answers."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

from eudaimon.models.base import ChatResponse, ModelStreamItem
from eudaimon.streaming import TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

_WORD = re.compile(r"\s*\S+\s*")


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _words(text: str, size: int) -> list[str]:
    """Word by word, as providers stream text; long words are cut at `size` characters."""
    return [piece for word in _WORD.findall(text) for piece in _chunks(word, size)] or _chunks(text, size)


async def stream_response(response: ChatResponse, chunk_chars: int = 16) -> AsyncIterator[ModelStreamItem]:
    """Yield `response` as text deltas (a word each) and argument deltas of at most
    `chunk_chars`, then the response itself."""
    for piece in _words(response.message.content, chunk_chars):
        yield TextDelta(piece)
    for call in response.message.tool_calls:
        yield ToolCallStart(call.id, call.name)
        raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        for piece in _chunks(raw, chunk_chars):
            yield ToolCallDelta(call.id, piece)
        yield ToolCallEnd(call.id)
    yield response
