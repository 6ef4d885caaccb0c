"""A support agent for the replay tests: it looks an order up (READ), then refunds it (WRITE).

Its model is a function of the system prompt: "generous" in the prompt refunds 10 instead of 5,
so a new prompt changes one argument of the WRITE and nothing else."""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import EventStore


class Counter:
    """How many times each tool really ran, and what the WRITE did."""

    def __init__(self) -> None:
        self.executions = {"lookup": 0, "refund": 0}
        self.ledger: list[int] = []


def support(
    store: EventStore | None, counter: Counter, *, prompt: str = "Be fair.", version: str = "v1"
) -> Agent[Any, Any]:
    @tool(effect="read")
    def lookup(order: int) -> str:
        """Look an order up."""
        counter.executions["lookup"] += 1
        return f"order {order}: 5 units, paid"

    @tool(effect="write")
    def refund(order: int, amount: int) -> str:
        """Refund an order."""
        counter.executions["refund"] += 1
        counter.ledger.append(amount)
        return f"refunded {amount} on order {order}"

    def answer(request: ChatRequest) -> Message | str:
        system = request.messages[0].content if request.messages[0].role == "system" else ""
        order = int("".join(ch for ch in str(request.messages[1].content) if ch.isdigit()) or "0")
        tools_seen = [m for m in request.messages if m.role == "tool"]
        if not tools_seen:
            looked = order + 1000 if "audit" in str(system) else order  # an audit looks at the archive copy
            return Message.assistant(tool_calls=[ToolCall("l1", "lookup", {"order": looked})])
        if len(tools_seen) == 1:
            amount = 10 if "generous" in str(system) else 5
            return Message.assistant(tool_calls=[ToolCall("r1", "refund", {"order": order, "amount": amount})])
        return f"refunded order {order}"

    return Agent(
        FunctionModel(answer),
        system_prompt=prompt,
        tools=[lookup, refund],
        store=store,
        name="support",
        version=version,
        memory=None,
    )


COUNTER = Counter()
"""What the agents the CLI loads (by MODULE:ATTR) executed."""


def fair() -> Agent[Any, Any]:
    """v1, in `$EUDAIMON_STORE` (the CLI's `--store`)."""
    return support(None, COUNTER)


def generous() -> Agent[Any, Any]:
    """v2: refunds 10 where v1 refunded 5."""
    return support(None, COUNTER, prompt="Be generous.", version="v2")


def same_answer(original: Any, replay: Any) -> bool:
    """An evaluator: did the replay answer as the original did?"""
    return bool(replay.output == original.output)
