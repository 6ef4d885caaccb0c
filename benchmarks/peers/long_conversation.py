"""The long conversation `benchmarks/history_size.py` measures: 100 model calls, large messages.

The user's input is `calls=N` (and `size=S`, 4,000 by default): the model answers each call
with a long message (S characters of reasoning) and a call of the READ tool `read_page`, whose
result is as long; after N - 1 such steps it answers. So the conversation the model is sent
grows by 2 S characters a call: ~800k characters, ~200k tokens, at call 100 of the default.
The model is a function of the conversation, so any worker (and any replay) answers the same.
A module of its own, because a workflow's worker imports the agent by `module:attribute`.
"""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Effect, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel

SAY = 4_000
"""Characters of each model message (under the 16k inline limit: it travels in the history)."""
PAGE = 4_000
"""Characters of each tool result."""


def _text(label: str, size: int) -> str:
    """`size` characters that differ from one label to the next (nothing for a codec to fold)."""
    line = f"{label}: the quick brown fox jumps over the lazy dog. "
    return (line * (size // len(line) + 1))[:size]


def _calls(text: str) -> int:
    return int(text.partition("calls=")[2].split()[0] or 1)


def _size(text: str) -> int:
    """`size=S` in the user's input: characters of each message and page (`SAY` by default)."""
    return int(text.partition("size=")[2].split()[0]) if "size=" in text else SAY


@tool(effect=Effect.READ)
def read_page(page: int, size: int = PAGE) -> str:
    """Read a page of the document."""
    return _text(f"page {page}", size)


def answer(request: ChatRequest) -> Message:
    users = [m for m in request.messages if m.role == "user"]
    done = sum(1 for m in request.messages if m.role == "tool")
    said = users[-1].content
    if done + 1 < _calls(said):
        call = ToolCall(f"c{done}", "read_page", {"page": done, "size": _size(said)})
        return Message.assistant(_text(f"thought {done}", _size(said)), tool_calls=[call])
    sent = sum(len(m.content) for m in request.messages)
    return Message.assistant(f"read {done} pages; {sent} characters sent at the last call")


def make(**options: Any) -> Agent:
    """The eudaimon agent (workers call it with no options)."""
    return Agent(
        FunctionModel(answer, model_id="long"),
        tools=[read_page],
        name="long",
        memory=None,
        max_iterations=500,
        **options,
    )
