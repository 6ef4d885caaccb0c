"""The demo agent behind `eudaimon demo`: a refund desk that runs offline.

A `ScriptedModel` plays the model, so the demo needs no API key and no network, and every run
takes the same path: three model iterations, a turn with two parallel READ lookups, then one
idempotent WRITE (the refund, keyed by the call's idempotency key), then a final answer.
`PacedModel` only slows the script's deltas down so that streaming can be watched.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from eudaimon.agent import Agent
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.extensions.cost import TokenDirection
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem, StopReason
from eudaimon.models.scripted import ScriptedModel
from eudaimon.stores.base import EventStore
from eudaimon.streaming import TextDelta
from eudaimon.tools import ToolContext, tool

DEMO_MODEL_ID = "scripted-demo"
DEMO_INPUT = "Hi! The headphones from order A-1042 arrived with a cracked band. Can I get my money back?"

_ORDERS: dict[str, dict[str, Any]] = {
    "A-1042": {
        "order_id": "A-1042",
        "customer": "Dana Kim",
        "item": "Noise-cancelling headphones",
        "category": "electronics",
        "price_usd": 129.0,
        "delivered_days_ago": 12,
    },
}
_POLICIES: dict[str, dict[str, Any]] = {
    "electronics": {"refund_window_days": 30, "damaged_on_arrival": "full refund, no return shipping"},
}

REFUNDS: dict[str, dict[str, Any]] = {}
"""The demo's payment system: refunds by idempotency key, so a re-run refunds nothing twice."""


@tool(effect="read")
async def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order: item, category, price and how long ago it was delivered.

    Args:
        order_id: The order number, such as "A-1042".
    """
    await asyncio.sleep(0)
    order = _ORDERS.get(order_id.upper())
    if order is None:
        raise LookupError(f"no order {order_id!r}")
    return order


@tool(effect="read")
async def refund_policy(category: str) -> dict[str, Any]:
    """The shop's refund policy for a product category.

    Args:
        category: The product category, such as "electronics".
    """
    await asyncio.sleep(0)
    return _POLICIES.get(category.lower(), {"refund_window_days": 14, "damaged_on_arrival": "store credit"})


@tool(effect="write", idempotent=True)
async def issue_refund(order_id: str, amount_usd: float, reason: str, ctx: ToolContext) -> dict[str, Any]:
    """Refund a customer. Safe to retry: the payment system dedupes on the call's idempotency key.

    Args:
        order_id: The order to refund.
        amount_usd: How much to refund, in US dollars.
        reason: Why, in a few words, for the ledger.
    """
    await asyncio.sleep(0)
    refund = REFUNDS.setdefault(
        ctx.idempotency_key,
        {
            "refund_id": f"RF-{ctx.idempotency_key[:8]}",
            "order_id": order_id,
            "amount_usd": amount_usd,
            "reason": reason,
        },
    )
    return {**refund, "status": "issued"}


class DemoPrices:
    """A cost model for the demo's scripted model, at gpt-4o-mini's list prices (USD per token)."""

    _PER_TOKEN: ClassVar[dict[TokenDirection, float]] = {
        TokenDirection.INPUT: 0.15e-6,
        TokenDirection.OUTPUT: 0.60e-6,
        TokenDirection.CACHED_INPUT: 0.075e-6,
    }

    def cost_per_token(self, model_id: str, direction: TokenDirection) -> float | None:
        return self._PER_TOKEN[TokenDirection(direction)] if model_id == DEMO_MODEL_ID else None


class PacedModel:
    """Wraps a model and waits `delay_s` before each streamed text delta, as a real model would."""

    def __init__(self, inner: ScriptedModel, delay_s: float) -> None:
        self._inner = inner
        self._delay_s = delay_s

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await self._inner.generate(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        async for item in self._inner.stream(request):
            if isinstance(item, TextDelta) and self._delay_s > 0:
                await asyncio.sleep(self._delay_s)
            yield item


def demo_script() -> list[ChatResponse]:
    """The model's side of the demo conversation: three iterations, one of two parallel calls."""
    return [
        ChatResponse(
            Message.assistant(
                "Sorry to hear that! Let me pull up your order and our refund policy.",
                [
                    ToolCall("call_order", "lookup_order", {"order_id": "A-1042"}),
                    ToolCall("call_policy", "refund_policy", {"category": "electronics"}),
                ],
            ),
            StopReason.TOOL_USE,
            Usage(input_tokens=412, output_tokens=61),
        ),
        ChatResponse(
            Message.assistant(
                "The order was delivered 12 days ago, well inside the 30-day window, and damaged items "
                "get a full refund. Issuing it now.",
                [
                    ToolCall(
                        "call_refund",
                        "issue_refund",
                        {"order_id": "A-1042", "amount_usd": 129.0, "reason": "damaged on arrival"},
                    )
                ],
            ),
            StopReason.TOOL_USE,
            Usage(input_tokens=598, output_tokens=74),
        ),
        ChatResponse(
            Message.assistant(
                "Done! I refunded $129.00 for the noise-cancelling headphones (order A-1042). "
                "You should see it on your card within 3–5 business days, and there is no need "
                "to send the damaged pair back."
            ),
            StopReason.END_TURN,
            Usage(input_tokens=701, output_tokens=58),
        ),
    ]


def demo_agent(store: EventStore | str | None = None, *, pace_s: float = 0.0) -> Agent:
    """A fresh refund-desk agent (its scripted model plays one run). A zero-argument factory,
    so `eudaimon run eudaimon.cli.demo:demo_agent "..."` works too."""
    model = ScriptedModel(demo_script(), model_id=DEMO_MODEL_ID, chunk_chars=12)
    return Agent(
        PacedModel(model, pace_s) if pace_s > 0 else model,
        name="refund-desk",
        system_prompt=(
            "You are the refund desk of an online shop. Look the order and the policy up before "
            "deciding, refund only within policy, and tell the customer what happens next."
        ),
        tools=[lookup_order, refund_policy, issue_refund],
        cost_model=DemoPrices(),
        max_iterations=6,
        store=store,
    )
