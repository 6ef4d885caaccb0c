"""The demo agent behind `eudaimon demo`: a refund desk that runs offline.

A scripted model plays the model, so the demo needs no API key and no network, and every run
takes the same path: open a support case (a plain WRITE: running it twice would open two
cases), look the order up (a READ: the demo's worker is killed in the middle of it), refund
(an idempotent WRITE, which needs a human's approval over `REFUND_LIMIT_USD`), then answer.

The tools act on "the outside world": when `$EUDAIMON_DEMO_LEDGER` names a file, every
execution appends one JSON line to it (tool, idempotency key, attempt, process id), so the demo
can show what ran, and how often, beside what the journal says.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

from eudaimon.agent import Agent
from eudaimon.core.messages import Message, Role, ToolCall, Usage
from eudaimon.extensions.cost import TokenDirection
from eudaimon.models._replay import stream_response
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, StopReason
from eudaimon.models.scripted import ScriptExhausted
from eudaimon.stores.base import EventStore
from eudaimon.streaming import TextDelta
from eudaimon.tools import Tool, ToolContext, ToolPolicy, tool

DEMO_MODEL_ID = "scripted-demo"
DEMO_INPUT = "Hi! The headphones from order A-1042 arrived with a cracked band. Can I get my money back?"
REFUND_LIMIT_USD = 100.0
"""Refunds above this wait for a human's approval (the demo's `approval_policy`)."""

LEDGER_ENV = "EUDAIMON_DEMO_LEDGER"
CRASH_ENV = "EUDAIMON_DEMO_CRASH_IN"
"""Names the tool whose first attempt stalls (so the demo can kill its process mid-call)."""

_ORDERS: dict[str, dict[str, Any]] = {
    "A-1042": {
        "order_id": "A-1042",
        "customer": "Dana Kim",
        "item": "Noise-cancelling headphones",
        "category": "electronics",
        "price_usd": 129.0,
        "delivered_days_ago": 12,
        "refund_window_days": 30,
    },
}


def _record(ctx: ToolContext, tool_name: str, **fields: Any) -> None:
    """Append this execution to the ledger, flushed before the tool goes on (a kill loses nothing)."""
    path = os.environ.get(LEDGER_ENV)
    if not path:
        return
    line = {"tool": tool_name, "key": ctx.idempotency_key, "attempt": ctx.attempt, "pid": os.getpid(), **fields}
    with Path(path).open("a", encoding="utf-8") as ledger:
        ledger.write(json.dumps(line) + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The executions recorded so far, oldest first (none when the file does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@tool(effect="write")
async def open_case(order_id: str, summary: str, ctx: ToolContext) -> dict[str, Any]:
    """Open a case in the support desk. Not idempotent: every call opens another case.

    Args:
        order_id: The order the case is about.
        summary: What went wrong, in a few words.
    """
    _record(ctx, "open_case", order_id=order_id)
    await asyncio.sleep(0)
    return {"case_id": f"CS-{ctx.idempotency_key[:6]}", "order_id": order_id, "summary": summary}


@tool(effect="read")
async def lookup_order(order_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Look up an order: item, price, when it was delivered and its refund window.

    Args:
        order_id: The order number, such as "A-1042".
    """
    _record(ctx, "lookup_order", order_id=order_id)
    if os.environ.get(CRASH_ENV) == "lookup_order" and ctx.attempt == 1:
        await asyncio.sleep(120)  # the demo kills this process here, in the middle of the call
    order = _ORDERS.get(order_id.upper())
    if order is None:
        raise LookupError(f"no order {order_id!r}")
    return order


@tool(effect="write", idempotent=True)
async def issue_refund(order_id: str, amount_usd: float, reason: str, ctx: ToolContext) -> dict[str, Any]:
    """Refund a customer. Safe to retry: the payment system dedupes on the call's idempotency key.

    Args:
        order_id: The order to refund.
        amount_usd: How much to refund, in US dollars.
        reason: Why, in a few words, for the ledger.
    """
    _record(ctx, "issue_refund", order_id=order_id, amount_usd=amount_usd)
    await asyncio.sleep(0)
    return {"refund_id": f"RF-{ctx.idempotency_key[:8]}", "order_id": order_id, "amount_usd": amount_usd}


def refund_limit_policy(call: ToolCall, tool: Tool) -> ToolPolicy:
    """A refund over the limit waits for a human; every other call runs as its tool says."""
    if call.name == "issue_refund":  # its arguments: a dict, validated against the tool's schema
        amount = call.arguments.get("amount_usd") if isinstance(call.arguments, dict) else None
        if not isinstance(amount, int | float) or amount > REFUND_LIMIT_USD:
            return ToolPolicy.REQUIRE_APPROVAL
    return ToolPolicy.REQUIRE_APPROVAL if tool.needs_approval else ToolPolicy.ALLOW


class DemoPrices:
    """A cost model for the demo's scripted model, at gpt-4o-mini's list prices (USD per token)."""

    _PER_TOKEN: ClassVar[dict[TokenDirection, float]] = {
        TokenDirection.INPUT: 0.15e-6,
        TokenDirection.OUTPUT: 0.60e-6,
        TokenDirection.CACHED_INPUT: 0.075e-6,
    }

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None:
        return self._PER_TOKEN[TokenDirection(direction)] if model_id == DEMO_MODEL_ID else None


class DemoModel:
    """Plays `demo_script()` by the conversation's position, not by a counter: a worker that
    resumes the run in a new process answers the next turn, not the first. Waits `pace_s`
    before each streamed text delta, as a real model would."""

    def __init__(self, pace_s: float = 0.0) -> None:
        self._script = demo_script()
        self._pace_s = pace_s

    @property
    def model_id(self) -> str:
        return DEMO_MODEL_ID

    async def generate(self, request: ChatRequest) -> ChatResponse:
        turn = sum(1 for message in request.messages if message.role is Role.ASSISTANT)
        if turn >= len(self._script):
            raise ScriptExhausted(f"the demo's script has {len(self._script)} turns", model=DEMO_MODEL_ID)
        last = request.messages[-1] if request.messages else None
        if turn == len(self._script) - 1 and last is not None and last.role is Role.TOOL and last.is_error:
            return DENIED_ANSWER  # the human said no: the model says so instead of claiming a refund
        return self._script[turn]

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        async for item in stream_response(await self.generate(request), chunk_chars=12):
            if isinstance(item, TextDelta) and self._pace_s > 0:
                await asyncio.sleep(self._pace_s)
            yield item


def _turn(text: str, calls: list[ToolCall], usage: Usage) -> ChatResponse:
    return ChatResponse(Message.assistant(text, calls), StopReason.TOOL_USE, usage)


def demo_script() -> list[ChatResponse]:
    """The model's side of the demo conversation: a case, a lookup, a refund, an answer."""
    return [
        _turn(
            "Sorry to hear that! I'm opening a case for you first.",
            [ToolCall("call_case", "open_case", {"order_id": "A-1042", "summary": "cracked band on arrival"})],
            Usage(input_tokens=412, output_tokens=48),
        ),
        _turn(
            "Now let me pull up the order.",
            [ToolCall("call_order", "lookup_order", {"order_id": "A-1042"})],
            Usage(input_tokens=520, output_tokens=31),
        ),
        _turn(
            "Delivered 12 days ago, well inside the 30-day window: a damaged item gets a full refund.",
            [
                ToolCall(
                    "call_refund",
                    "issue_refund",
                    {"order_id": "A-1042", "amount_usd": 129.0, "reason": "damaged on arrival"},
                )
            ],
            Usage(input_tokens=611, output_tokens=74),
        ),
        ChatResponse(
            Message.assistant(
                "Done! I refunded $129.00 for the noise-cancelling headphones (order A-1042). "
                "You should see it on your card within 3–5 business days, and there is no need "
                "to send the damaged pair back."
            ),
            StopReason.END_TURN,
            Usage(input_tokens=702, output_tokens=58),
        ),
    ]


DENIED_ANSWER = ChatResponse(
    Message.assistant(
        "I'm sorry: a supervisor did not approve a refund of this size. Your case stays open, "
        "and a colleague will contact you within one business day."
    ),
    StopReason.END_TURN,
    Usage(input_tokens=702, output_tokens=41),
)


def demo_agent(store: EventStore | str | None = None, *, pace_s: float = 0.0) -> Agent:
    """A fresh refund-desk agent (its scripted model plays one run). A zero-argument factory,
    so `eudaimon run eudaimon.cli.demo:demo_agent "..."` works too."""
    return Agent(
        DemoModel(pace_s),
        name="refund-desk",
        system_prompt=(
            "You are the refund desk of an online shop. Open a case, look the order up before "
            "deciding, refund only within policy, and tell the customer what happens next."
        ),
        tools=[open_case, lookup_order, issue_refund],
        approval_policy=refund_limit_policy,
        cost_model=DemoPrices(),
        max_iterations=8,
        memory=None,
        store=store,
    )
