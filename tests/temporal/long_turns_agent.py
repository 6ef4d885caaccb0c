"""An agent whose model turns are large: each of its calls says 40k characters and asks a READ
tool for a 40k-character page; the last answers. The conversation grows by 80k characters a
call; the model is a function of the conversation, so any worker (and any replay) answers the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eudaimon import Agent, Effect, Message, ToolCall, tool
from eudaimon.middleware import Middleware
from eudaimon.models import ChatRequest, FunctionModel

TURN = 40_000
"""Characters of each model message and of each tool result: over the 16k inline limit."""
CALLS = 6


def _text(label: str) -> str:
    line = f"{label}: the quick brown fox jumps over the lazy dog. "
    return (line * (TURN // len(line) + 1))[:TURN]


@tool(effect=Effect.READ)
def read_page(page: int) -> str:
    """Read a page of the document."""
    return _text(f"page {page}")


def answer(request: ChatRequest) -> Message:
    done = sum(1 for m in request.messages if m.role == "tool")
    if done + 1 < CALLS:
        return Message.assistant(
            _text(f"thought {done}"), tool_calls=[ToolCall(f"c{done}", "read_page", {"page": done})]
        )
    sent = sum(len(m.content) for m in request.messages)
    return Message.assistant(f"read {done} pages; sent {sent} characters")


def make(**options: Any) -> Agent:
    """The agent (workers call it with no options)."""
    return Agent(FunctionModel(answer, model_id="long-turns"), tools=[read_page], name="long-turns", **options)


class CopyEveryMessage(Middleware):
    """Passes every message on as a copy (as a layer that rebuilds the list does): equal to
    the run's messages, but not the same objects."""

    def on_request(self, request: ChatRequest) -> None:
        request.messages = [replace(m) for m in request.messages]


def make_copying(**options: Any) -> Agent:
    """The agent with `CopyEveryMessage` around its model calls."""
    return make(middleware=[CopyEveryMessage()], **options)
