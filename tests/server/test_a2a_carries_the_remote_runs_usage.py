"""An A2A call to another eudaimon carries what the remote run spent back to the caller's run:
its tokens and cost are added to the caller's usage and cost, so the caller's budget sees them.

Bug (issue 39): a remote A2A call recorded 0 tokens, so the caller's budget missed what the
remote agent spent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _a2a_support import A2AServer

from eudaimon import Agent, Message, ToolCall
from eudaimon.a2a import A2AAgent
from eudaimon.core.events import ToolCompleted
from eudaimon.core.messages import Usage
from eudaimon.errors import BudgetExceeded
from eudaimon.models import ChatResponse, ScriptedModel, StopReason


class FlatPrice:
    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.001


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServer]:
    running = A2AServer(tmp_path_factory.mktemp("a2a-spender") / "runs.db", agents=("_a2a_agents:spender",)).start()
    yield running
    running.stop()


def _caller(remote: A2AServer, **options: object) -> Agent:
    model = ScriptedModel(
        [
            ChatResponse(
                Message.assistant(None, [ToolCall("c1", "spender", {"input": "go"})]), StopReason.TOOL_USE, Usage(10, 2)
            ),
            ChatResponse(Message.assistant("done"), StopReason.END_TURN, Usage(10, 2)),
        ],
        model_id="caller-model",
    )
    return Agent(model, tools=[A2AAgent(remote.agent_url("spender"), effect="read")], memory=None, **options)  # type: ignore[arg-type]


async def test_the_remote_runs_usage_and_cost_are_added_to_the_callers_run(remote: A2AServer) -> None:
    """Invariant: the call's `tool_completed` holds the remote run's usage and cost; the
    caller's run totals include them."""
    agent = _caller(remote, cost_model=FlatPrice())
    response = await agent.prompt("delegate")
    assert response.status == "completed"
    events = [e.data for e in await agent.store.load(response.run_id)]
    [completed] = [d for d in events if isinstance(d, ToolCompleted)]
    assert completed.usage == Usage(100, 20, 40)
    assert completed.cost_usd == pytest.approx(0.12)
    state = await agent.state(response.run_id)
    assert state.usage == Usage(120, 24, 40)  # the caller's two calls and the remote run
    assert response.cost == pytest.approx(0.12 + 0.024)


async def test_the_callers_token_budget_sees_what_the_remote_spent(remote: A2AServer) -> None:
    """A caller with a 50-token budget stops after the remote call that spent 120."""
    agent = _caller(remote, max_budget_tokens=50)
    with pytest.raises(BudgetExceeded):
        await agent.prompt("delegate")
