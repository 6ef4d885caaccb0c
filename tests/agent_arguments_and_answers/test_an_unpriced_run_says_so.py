"""A run no cost model prices reads "unpriced" in Python too: `AgentResponse.cost_usd` is None
(as the API's `cost_usd` is null and the CLI and inspector say "unpriced"), not a 0.0 that reads
as free; a priced run has its cost there."""

from __future__ import annotations

from eudaimon import Agent
from eudaimon.core.messages import Message, Usage
from eudaimon.models import ChatResponse, ScriptedModel, StopReason
from eudaimon.stores import MemoryStore


class FlatPrice:
    """One cent per token, for every model."""

    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.01


def _answer() -> ChatResponse:
    return ChatResponse(Message.assistant("hi"), StopReason.END_TURN, usage=Usage(input_tokens=3, output_tokens=2))


async def test_an_unpriced_run_has_no_cost_usd() -> None:
    """Invariant: without a cost model `cost_usd` is None (and `cost`, kept for old callers, 0)."""
    answer = await Agent(ScriptedModel([_answer()]), store=MemoryStore(), memory=None).prompt("hello")
    assert answer.cost_usd is None and answer.cost == 0.0


async def test_a_priced_run_has_its_cost_usd() -> None:
    """Invariant: with a cost model `cost_usd` is the run's cost."""
    agent = Agent(ScriptedModel([_answer()]), store=MemoryStore(), memory=None, cost_model=FlatPrice())
    answer = await agent.prompt("hello")
    assert answer.cost_usd == answer.cost > 0
