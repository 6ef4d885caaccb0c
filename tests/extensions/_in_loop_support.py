"""Shared helpers for the in-loop extension tests: reading a run's journal through the public API."""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Message, ToolCall, Usage
from eudaimon.core.codec import event_to_json
from eudaimon.core.events import Event
from eudaimon.models import ChatResponse, StopReason


async def journal(agent: Agent, run_id: str) -> list[Event]:
    """Every event of the run, as committed to the agent's store."""
    return await agent.store.load(run_id)


async def types(agent: Agent, run_id: str) -> list[str]:
    return [e.type for e in await journal(agent, run_id)]


async def payloads(agent: Agent, run_id: str, event_type: str) -> list[Any]:
    """The payloads of the run's events of one type, in order."""
    return [e.data for e in await journal(agent, run_id) if e.type == event_type]


async def journal_json(agent: Agent, run_id: str) -> str:
    """The run's journal as the JSON rows a store writes, one per line."""
    return "\n".join(event_to_json(e) for e in await journal(agent, run_id))


def call(
    name: str, arguments: dict[str, Any] | None = None, *, id: str = "c1", usage: Usage | None = None
) -> ChatResponse:
    """A model turn asking for one tool call."""
    return ChatResponse(
        Message.assistant(tool_calls=[ToolCall(id, name, arguments or {})]), StopReason.TOOL_USE, usage=usage
    )


def answer(text: str, *, usage: Usage | None = None, model: str | None = None) -> ChatResponse:
    """A model turn giving a final answer."""
    return ChatResponse(Message.assistant(text), usage=usage, model=model)
