"""What the tests of runs that live in time share: a store opener type and the two agents
(`payer` asks a human for an irreversible wire, `fetcher`'s tool raises `RetryAfter`)."""

from __future__ import annotations

from collections.abc import Callable

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.base import EventStore
from eudaimon.tools import RetryAfter, ToolContext

Opener = Callable[[], EventStore]
WAIT_S = 0.5


def payer(store: EventStore, seen: list[str], **settings: object) -> Agent:
    @tool(effect="irreversible", approval_timeout_s=settings.pop("tool_timeout", None))  # type: ignore[arg-type]
    def send_wire(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role == "tool":
            seen.append(last.content)
            return "understood"
        return Message.assistant(tool_calls=[ToolCall("w", "send_wire", '{"amount": 900}')])

    return Agent(FunctionModel(answer), tools=[send_wire], store=store, name="payer", **settings)  # type: ignore[arg-type]


def fetcher(store: EventStore, seen: list[str], waits: int = 1, **settings: object) -> Agent:
    @tool(effect="write", idempotent=True)
    def fetch_report(ctx: ToolContext, name: str) -> str:
        """Fetch a report that may not be ready yet."""
        if ctx.attempt <= waits:
            raise RetryAfter(WAIT_S, reason="the report is being built")
        return f"report {name} at attempt {ctx.attempt}"

    def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role == "tool":
            seen.append(last.content)
            return "done"
        return Message.assistant(tool_calls=[ToolCall("f", "fetch_report", '{"name": "q3"}')])

    return Agent(FunctionModel(answer), tools=[fetch_report], store=store, name="fetcher", **settings)  # type: ignore[arg-type]
