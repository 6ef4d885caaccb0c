"""Agent modules for the change tests on the fleet: v1 and v2 of one agent, whose `wire` tool
renamed its argument (`to` -> `recipient`).

The model is a function of the conversation, so every worker and every replay answers the same:
it wires to bob with v1's argument first; told that call did not run, it calls again with v2's.
Every execution of a tool is written to `$FLEET_LEDGER` (see `fleet_agent`).
"""

from __future__ import annotations

from typing import Any

from fleet_agent import _ledger

from eudaimon import Agent, Effect, Message, ToolCall, ToolContext, tool
from eudaimon.models import ChatRequest, FunctionModel


@tool(effect=Effect.IRREVERSIBLE)
def wire(to: str, ctx: ToolContext) -> str:
    """Wire money to someone (needs a human's approval)."""
    _ledger("wire", ctx, to=to)
    return f"wired to {to}"


@tool(name="wire", effect=Effect.IRREVERSIBLE)
def wire_v2(recipient: str, ctx: ToolContext) -> str:
    """Wire money to someone (needs a human's approval); v2 names the argument `recipient`."""
    _ledger("wire", ctx, recipient=recipient)
    return f"wired to {recipient}"


def answer(request: ChatRequest) -> Message:
    calls = [m for m in request.messages if m.role == "assistant" and m.tool_calls]
    results = [m for m in request.messages if m.role == "tool"]
    if not calls:
        return Message.assistant(tool_calls=[ToolCall("c0", "wire", {"to": "bob"})])
    if len(calls) == 1 and results and results[-1].is_error:
        return Message.assistant(tool_calls=[ToolCall("c1", "wire", {"recipient": "bob"})])
    return Message.assistant("done: " + "; ".join(m.content[:80] for m in results))


def make_v1(**options: Any) -> Agent:
    return Agent(FunctionModel(answer, model_id="change-model"), tools=[wire], name="payer", version="v1", **options)


def make_v2(**options: Any) -> Agent:
    return Agent(FunctionModel(answer, model_id="change-model"), tools=[wire_v2], name="payer", version="v2", **options)


def make_v2_refusing(**options: Any) -> Agent:
    return make_v2(on_change="refuse", **options)
