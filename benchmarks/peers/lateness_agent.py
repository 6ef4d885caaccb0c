"""The agent `benchmarks/temporal_timer_lateness.py` serves from one `eudaimon worker`: its one
tool waits durably (`RetryAfter`) as its arguments say, so held runs and measured runs are runs
of one agent on one worker.

"hold S" asks `nap(seconds=S, times=1)`: the run waits S seconds (it stays in flight). "tick S K"
asks `nap(seconds=S, times=K)`: the call waits S seconds K times over, then answers; the model
then says "done". The model is a function of the conversation alone (no sleeps): what is measured
is the timers, not the model.
"""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.tools import RetryAfter, ToolContext


@tool(effect="write", idempotent=True)
def nap(ctx: ToolContext, seconds: float, times: int) -> str:
    """Wait `seconds` durably, `times` times over, then answer."""
    if ctx.attempt <= times:
        raise RetryAfter(seconds, reason="napping")
    return "awake"


async def answer(request: ChatRequest) -> Message | str:
    if request.messages[-1].role == "tool":
        return "done"
    words = str(request.messages[-1].content).split()
    seconds, times = float(words[1]), int(words[2]) if words[0] == "tick" else 1
    return Message.assistant(tool_calls=[ToolCall("c0", "nap", {"seconds": seconds, "times": times})])


def make(**options: Any) -> Agent:
    return Agent(FunctionModel(answer, model_id="lateness"), tools=[nap], name="lateness", memory=None, **options)
