"""An MCP call to another eudaimon carries what the called run spent back to the caller's run
(the result's `_meta["io.eudaimon/usage"]`): its tokens and cost are added to the caller's usage
and cost, so the caller's budget sees them, as over A2A."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _server_support import Server

from eudaimon import Agent, Message, ToolCall
from eudaimon.core.events import ToolCompleted
from eudaimon.core.messages import Usage
from eudaimon.mcp import MCPTools
from eudaimon.models import ChatResponse, ScriptedModel, StopReason


class FlatPrice:
    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.001


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(
        tmp_path_factory.mktemp("mcp-spender") / "runs.db", args=("--mcp", "--agent", "_a2a_agents:spender")
    ).start()
    yield running
    running.stop()


async def test_the_called_runs_usage_and_cost_are_added_to_the_callers_run(served: Server) -> None:
    """Invariant: the call's `tool_completed` holds the called run's usage and cost; the
    caller's run totals include them."""
    model = ScriptedModel(
        [
            ChatResponse(
                Message.assistant(None, [ToolCall("c1", "spender", {"input": "go"})]), StopReason.TOOL_USE, Usage(10, 2)
            ),
            ChatResponse(Message.assistant("done"), StopReason.END_TURN, Usage(10, 2)),
        ],
        model_id="caller-model",
    )
    remote = MCPTools(url=served.url + "/mcp", trusted=True)
    caller = Agent(model, tools=[remote], memory=None, cost_model=FlatPrice())
    try:
        response = await caller.prompt("delegate")
    finally:
        await remote.aclose()
    assert response.status == "completed"
    [completed] = [e.data for e in await caller.store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
    assert completed.usage == Usage(100, 20, 40) and not completed.is_error
    assert completed.cost_usd == pytest.approx(0.12)
    state = await caller.state(response.run_id)
    assert state.usage == Usage(120, 24, 40)  # the caller's two calls and the called run
    assert response.cost == pytest.approx(0.12 + 0.024)
