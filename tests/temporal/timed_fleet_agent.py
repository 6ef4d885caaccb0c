"""Agents whose calls live in time, served by the Temporal fleet in the deadline and wait tests:
`slowpay` asks a human with a deadline of `$TIMED_APPROVAL_S` (1.5 s by default; `cancel`
when `$TIMED_ON_TIMEOUT` says so), `napper`'s tool raises `RetryAfter($TIMED_WAIT_S)` (2 s by
default: a Temporal timer's wait, past `_timers.SHORT_WAIT`) on its first attempt and answers on
the next. A prompt saying "again" makes the model ask a second time after the first answer (a
run that goes on after a deadline), held at `$TIMED_GATE`."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.tools import RetryAfter, ToolContext


@tool(effect="irreversible")
def send_wire(amount_usd: float, to: str) -> str:
    """Send money by wire."""
    return f"sent {amount_usd} to {to}"


@tool(effect="write", idempotent=True)
def fetch_report(ctx: ToolContext, name: str) -> str:
    """Fetch a report that is built on demand."""
    if ctx.attempt == 1:
        raise RetryAfter(float(os.environ.get("TIMED_WAIT_S", "2")), reason="the report is being built")
    return f"report {name} (attempt {ctx.attempt}, key {ctx.idempotency_key})"


def _answer(tool_name: str, arguments: str) -> FunctionModel:
    async def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        asked = sum(1 for m in request.messages if m.role == "tool")
        again = any(m.role == "user" and "again" in str(m.content) for m in request.messages)
        if last.role == "tool" and not (again and asked == 1):
            return f"the tool said: {last.content}"
        if asked == 1:
            await _gate()
        return Message.assistant(tool_calls=[ToolCall(f"call_{asked + 1}", tool_name, arguments)])

    return FunctionModel(answer, f"{tool_name}-model")


async def _gate() -> None:
    """Hold the model while the file `$TIMED_GATE` exists: a test decides in that moment."""
    gate = os.environ.get("TIMED_GATE")
    while gate and os.path.exists(gate):
        await asyncio.sleep(0.05)


def make_slowpay(**options: Any) -> Agent:
    return Agent(
        _answer("send_wire", '{"amount_usd": 120, "to": "ACME"}'),
        tools=[send_wire],
        name="slowpay",
        approval_timeout_s=float(os.environ.get("TIMED_APPROVAL_S", "1.5")),
        on_approval_timeout=os.environ.get("TIMED_ON_TIMEOUT", "deny"),
        **options,
    )


def make_napper(**options: Any) -> Agent:
    return Agent(_answer("fetch_report", '{"name": "q3"}'), tools=[fetch_report], name="napper", **options)
