"""Agents the test servers serve (`--agent _server_agents:NAME`), on models that are pure
functions of the request: a server restarted mid-run asks for the very same calls again.

- `payer` sends a wire (IRREVERSIBLE: every call waits for a human), then says it is done.
- `ticker` calls a READ tool `tick` once a step, `ticks=N` times (from its input), pausing
  `EUDAIMON_TEST_STEP_S` seconds in each model call, then answers with a long text (several
  deltas). Long enough to kill its server mid-run, cancel it, or follow it with many streams.
- `charger` calls a WRITE tool `charge_card` once: after a crash mid-call its outcome is unknown.
"""

from __future__ import annotations

import asyncio
import os
import re

from _turns_support import this_turn, tool_results

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel

STEP_S = float(os.environ.get("EUDAIMON_TEST_STEP_S", "0.05"))


@tool(effect="irreversible")
def send_wire(amount_usd: float, to: str) -> str:
    """Send a wire transfer.

    Args:
        amount_usd: How much.
        to: The payee.
    """
    return f"sent ${amount_usd:.2f} to {to}"


@tool(effect="read")
async def tick(n: int) -> str:
    """Count one tick."""
    return f"tick {n}"


CHARGE_S = float(os.environ.get("EUDAIMON_TEST_CHARGE_S", "3600"))
"""How long a charge takes: long enough that a test stops it mid-call, as a crash would."""


@tool(effect="write")
async def charge_card(amount_usd: float) -> str:
    """Charge the customer's card."""
    await asyncio.sleep(CHARGE_S)
    return f"charged ${amount_usd:.2f}"


def _pay(request: ChatRequest) -> Message | str:
    results = tool_results(request)
    if results:
        return f"Done: {results[-1].content}."
    found = re.search(r"(\d+(?:\.\d+)?)\s+to\s+(\S+)", this_turn(request)[0].content)
    amount, payee = (float(found.group(1)), found.group(2)) if found else (10.0, "ACME")
    return Message.assistant(
        "I will send the wire.", tool_calls=[ToolCall("wire_1", "send_wire", {"amount_usd": amount, "to": payee})]
    )


async def _tick(request: ChatRequest) -> Message | str:
    await asyncio.sleep(STEP_S)
    user = this_turn(request)[0]
    found = re.search(r"ticks=(\d+)", user.content)
    wanted = int(found.group(1)) if found else 3
    done = len(tool_results(request))
    if done < wanted:
        return Message.assistant(tool_calls=[ToolCall(f"tick_{done + 1}", "tick", {"n": done + 1})])
    return f"Ticked {done} times. " + "All good. " * 8


def _charge(request: ChatRequest) -> Message | str:
    results = tool_results(request)
    if results:
        return f"The card was charged: {results[-1].content}"
    return Message.assistant(tool_calls=[ToolCall("charge_1", "charge_card", {"amount_usd": 42.0})])


payer = Agent(FunctionModel(_pay, "payer-model"), tools=[send_wire], name="payer")
ticker = Agent(FunctionModel(_tick, "ticker-model"), tools=[tick], name="ticker", max_iterations=10_000)
charger = Agent(FunctionModel(_charge, "charger-model"), tools=[charge_card], name="charger")
