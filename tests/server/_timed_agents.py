"""Agents whose calls live in time, served by `eudaimon serve` in the deadline and wait tests:
`slowpay` asks a human with a deadline (`EUDAIMON_TEST_APPROVAL_S`), `napper`'s tool raises
`RetryAfter(EUDAIMON_TEST_WAIT_S)` on its first attempt."""

from __future__ import annotations

import os

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.tools import RetryAfter, ToolContext

APPROVAL_S = float(os.environ.get("EUDAIMON_TEST_APPROVAL_S", "3"))
WAIT_S = float(os.environ.get("EUDAIMON_TEST_WAIT_S", "3"))


@tool(effect="irreversible")
def send_wire(amount_usd: float, to: str) -> str:
    """Send money by wire."""
    return f"sent {amount_usd} to {to}"


@tool(effect="write", idempotent=True)
def fetch_report(ctx: ToolContext, name: str) -> str:
    """Fetch a report that is built on demand."""
    if ctx.attempt == 1:
        raise RetryAfter(WAIT_S, reason="the report is being built")
    return f"report {name} (attempt {ctx.attempt}, key {ctx.idempotency_key[:12]})"


def _answer(tool_name: str, arguments: str) -> FunctionModel:
    def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role == "tool":
            return f"the tool said: {last.content}"
        return Message.assistant(tool_calls=[ToolCall("call_1", tool_name, arguments)])

    return FunctionModel(answer, f"{tool_name}-model")


slowpay = Agent(
    _answer("send_wire", '{"amount_usd": 120, "to": "ACME"}'),
    tools=[send_wire],
    name="slowpay",
    approval_timeout_s=APPROVAL_S,
)
napper = Agent(_answer("fetch_report", '{"name": "q3"}'), tools=[fetch_report], name="napper")
