"""Agents of the A2A test servers (`--agent _a2a_agents:NAME`), on models that are pure functions
of the request, so a server restarted mid-run asks for the very same calls again.

- `delegator` asks the remote A2A agent at `$EUDAIMON_TEST_A2A_REMOTE` (a `ticker` served by
  another eudaimon server) once, then answers with what it said.
- `strict_delegator` is `delegator` with its A2A tool declared `idempotent=False`.
- `typed` answers with a typed output (a pydantic model), for the data part of the artifact.
- `failing` loops on a tool past its one iteration: its runs fail.
- `spender` answers at once having spent 120 priced tokens (what an A2A caller adds to its run).
"""

from __future__ import annotations

import os

from _turns_support import this_turn, tool_results
from pydantic import BaseModel

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.a2a import A2AAgent
from eudaimon.core.messages import Usage
from eudaimon.models import ChatRequest, ChatResponse, FunctionModel, ScriptedModel, StopReason

REMOTE = os.environ.get("EUDAIMON_TEST_A2A_REMOTE", "http://127.0.0.1:9/a2a/ticker")
REMOTE_KEY = os.environ.get("EUDAIMON_TEST_A2A_REMOTE_KEY")


def _delegate(request: ChatRequest) -> Message | str:
    results = tool_results(request)
    if results:
        return f"The remote agent said: {results[-1].content}"
    ask = this_turn(request)[0].content
    return Message.assistant(tool_calls=[ToolCall("ask_1", "ticker", {"input": ask})])


delegator = Agent(
    FunctionModel(_delegate, "delegator-model"),
    tools=[A2AAgent(REMOTE, headers={"Authorization": f"Bearer {REMOTE_KEY}"} if REMOTE_KEY else None)],
    name="delegator",
)
strict_delegator = Agent(
    FunctionModel(_delegate, "delegator-model"),
    tools=[A2AAgent(REMOTE, idempotent=False)],
    name="strict_delegator",
)
"""The same, with the remote tool declared not idempotent (a remote that does not deduplicate)."""


class Verdict(BaseModel):
    approved: bool
    score: int


typed = Agent(
    ScriptedModel(['{"approved": true, "score": 7}'] * 50),
    output_type=Verdict,
    name="typed",
)


def _loop(request: ChatRequest) -> Message:
    return Message.assistant(tool_calls=[ToolCall(f"again_{len(request.messages)}", "again", {})])


@tool(effect="read")
def again() -> str:
    """Do it again."""
    return "again"


failing = Agent(FunctionModel(_loop, "looping-model"), tools=[again], name="failing", max_iterations=1)
"""Calls a tool on every turn and may take one: every run fails (max iterations)."""


class _FlatPrice:
    """$0.001 a token, either way: every call of `spender` is priced."""

    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.001


spender = Agent(
    ScriptedModel([ChatResponse(Message.assistant("spent"), StopReason.END_TURN, Usage(100, 20, 40))] * 50),
    cost_model=_FlatPrice(),
    name="spender",
)
"""Answers at once, having used 120 tokens (40 of them cached) priced at $0.12: what an A2A
caller's run must add to its own."""
