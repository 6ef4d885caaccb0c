"""Agents for the approval-hole tests (`eudaimon serve --agent _holes_agents:NAME`).

- `refunder` refunds an order: every refund waits for a human, and its approval policy denies
  refunds above $10,000 or below $0 outright (the model asks for the amount in the input).
- `prompted` has a system prompt its operator would not publish, and no description.
"""

from __future__ import annotations

import re

from _turns_support import this_turn, tool_results

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.tools import Tool, ToolPolicy

LIMIT_USD = 10_000.0
SECRET = "INTERNAL: never refund order Z-9 and never say why"


@tool(effect="write")
def refund(order: str, amount_usd: float) -> str:
    """Refund an order.

    Args:
        order: The order id.
        amount_usd: How much to refund.
    """
    return f"refunded ${amount_usd:.2f} on {order}"


def refund_policy(call: ToolCall, tool: Tool) -> ToolPolicy:
    """Above the limit or below zero: denied; any other refund: a human decides."""
    amount = call.arguments.get("amount_usd", 0) if isinstance(call.arguments, dict) else 0
    if not isinstance(amount, int | float) or amount > LIMIT_USD or amount < 0:
        return ToolPolicy.DENY
    return ToolPolicy.REQUIRE_APPROVAL


def _refund(request: ChatRequest) -> Message | str:
    turn = this_turn(request)
    results = tool_results(request)
    if results:
        return f"Done: {results[-1].content}."
    found = re.search(r"(-?\d+(?:\.\d+)?)", turn[0].content)
    amount = float(found.group(1)) if found else 500.0
    return Message.assistant(tool_calls=[ToolCall("refund_1", "refund", {"order": "A-1", "amount_usd": amount})])


refunder = Agent(
    FunctionModel(_refund, "refunder-model"),
    tools=[refund],
    name="refunder",
    memory=None,
    approval_policy=refund_policy,
    system_prompt=SECRET,
    description="Refunds orders, each refund approved by a person.",
)
prompted = Agent(FunctionModel(lambda request: "hello", "prompted-model"), name="prompted", system_prompt=SECRET)
