"""Agents for the inspector's browser tests (`--agent _inspector_agents:NAME`), on models that
are functions of the request.

- `family` asks a child agent (`researcher`, as the tool `research`), has its first model call
  fail once with a retryable error (a `model_retry_scheduled`, then a retry), sends a wire
  (IRREVERSIBLE, so it waits for approval), and ends with an answer cut at `max_tokens`: one
  run whose waterfall has every kind of span and a stop reason worth showing.
- `refunder` refunds (WRITE) then pays (IRREVERSIBLE, approval): a run whose fork may repeat them.
- `twins` asks for two identical wires in one step: two pending calls told apart only by id.
- `ponderer` hangs in its model call where `PONDER_HANG` is set: a run a crash interrupts.
- `broken` fails at once with a model error no retry cures (`model_failed`, then `run_failed`).
"""

from __future__ import annotations

import asyncio
import os
import re

from _server_agents import send_wire
from _turns_support import this_turn, tool_results

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.errors import ModelError, ModelUnavailable
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.models.base import ChatResponse, StopReason

_failed_once: set[str] = set()


@tool(effect="write", requires_approval=False)
def refund(order: str) -> str:
    """Refund an order.

    Args:
        order: The order id.
    """
    return f"refunded {order}"


def _research(request: ChatRequest) -> str:
    return "The payee is ACME-Corp, account 991."


researcher = Agent(FunctionModel(_research, "researcher-model"), name="researcher", memory=None)


def _family(request: ChatRequest) -> Message | ChatResponse | str:
    user = this_turn(request)[0]
    done = len(tool_results(request))
    if done == 0:
        if user.id not in _failed_once:  # the first call of each run fails once, before any content
            _failed_once.add(user.id)
            raise ModelUnavailable("503 from the provider: overloaded, try again")
        return Message.assistant(tool_calls=[ToolCall("research_1", "research", {"input": "who is the payee?"})])
    if done == 1:
        found = re.search(r"to (\S+)", user.content)
        return Message.assistant(
            tool_calls=[
                ToolCall("wire_1", "send_wire", {"amount_usd": 12.5, "to": found.group(1) if found else "ACME-Corp"})
            ]
        )
    return ChatResponse(Message.assistant("Sent the wire; the summary was cut"), StopReason.MAX_TOKENS)


def _refunder(request: ChatRequest) -> Message | str:
    done = len(tool_results(request))
    if done == 0:
        return Message.assistant(tool_calls=[ToolCall("refund_1", "refund", {"order": "A-17"})])
    if done == 1:
        return Message.assistant(tool_calls=[ToolCall("wire_1", "send_wire", {"amount_usd": 5.0, "to": "ALICE"})])
    return "Refunded and paid."


def _twins(request: ChatRequest) -> Message | str:
    if tool_results(request):
        return "Both sent."
    args = {"amount_usd": 100.0, "to": "BOB"}
    return Message.assistant(
        tool_calls=[ToolCall("wire_a", "send_wire", dict(args)), ToolCall("wire_b", "send_wire", dict(args))]
    )


family = Agent(
    FunctionModel(_family, "family-model"),
    tools=[researcher.as_tool(name="research"), send_wire],
    name="family",
    memory=None,
)
refunder = Agent(FunctionModel(_refunder, "refunder-model"), tools=[refund, send_wire], name="refunder", memory=None)
twins = Agent(FunctionModel(_twins, "twins-model"), tools=[send_wire], name="twins", memory=None)


def _broken(request: ChatRequest) -> str:
    raise ModelError("400 from the provider: the model 'gpt-nonexistent' does not exist")


broken = Agent(FunctionModel(_broken, "broken-model"), name="broken", memory=None)


async def _ponder(request: ChatRequest) -> str:
    """Hangs in its model call on a server started with PONDER_HANG=1 (to be killed there), and
    answers at once anywhere else: a run whose model call a crash interrupts."""
    if os.environ.get("PONDER_HANG"):
        await asyncio.sleep(3600)
    return "Pondered: " + this_turn(request)[0].content


ponderer = Agent(FunctionModel(_ponder, "ponder-model"), name="ponderer", memory=None)
