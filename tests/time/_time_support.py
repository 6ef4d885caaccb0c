"""What the tests of runs that live in time share: a store opener type and the two agents
(`payer` asks a human for an irreversible wire, `fetcher`'s tool raises `RetryAfter`)."""

from __future__ import annotations

from collections.abc import Callable

from eudaimon import Agent, tool
from eudaimon.stores.base import EventStore
from eudaimon.tools import RetryAfter, ToolContext
from support.agents import calls_once

Opener = Callable[[], EventStore]
WAIT_S = 0.5


def payer(store: EventStore, seen: list[str], **settings: object) -> Agent:
    @tool(effect="irreversible", approval_timeout_s=settings.pop("tool_timeout", None))  # type: ignore[arg-type]
    def send_wire(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    return calls_once(
        send_wire, '{"amount": 900}', call_id="w", then="understood", heard=seen, store=store, name="payer", **settings
    )


def fetcher(store: EventStore, seen: list[str], waits: int = 1, **settings: object) -> Agent:
    @tool(effect="write", idempotent=True)
    def fetch_report(ctx: ToolContext, name: str) -> str:
        """Fetch a report that may not be ready yet."""
        if ctx.attempt <= waits:
            raise RetryAfter(WAIT_S, reason="the report is being built")
        return f"report {name} at attempt {ctx.attempt}"

    return calls_once(fetch_report, '{"name": "q3"}', call_id="f", heard=seen, store=store, name="fetcher", **settings)
