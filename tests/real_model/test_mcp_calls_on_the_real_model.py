"""An agent served over MCP (`create_app(mcp=True)`, a real uvicorn) on the real model server:
the official MCP SDK's client calls it with an idempotency key, twice, as a client that lost the
first answer would. The model is tiny and may ask for a refund, write a broken call or none: the
test checks structure, never wording.
"""

from __future__ import annotations

from pathlib import Path

from _real_model import RealModelServer

from eudaimon import Agent, tool
from eudaimon.core.state import RunState
from eudaimon.models import ModelSettings, infer_model
from eudaimon.server import create_app
from eudaimon.stores.sqlite import SqliteStore
from support.asgi import served
from support.mcp_client import KEY_META, mcp_client

ASK = (
    "Repeat exactly, nothing else: <tool_call>\n"
    '{"name": "refund", "arguments": {"order": "A-7", "amount_usd": 550}}\n</tool_call>'
)


async def test_an_mcp_call_never_refunds_without_a_person_and_a_resent_call_finds_its_run(
    real_model: RealModelServer, tmp_path: Path
) -> None:
    """Invariants: whatever the model wrote, the irreversible refund did not run for an MCP
    caller without a person; the answer is the run's status as journaled; the call sent again
    with its key is answered with the same run, and the journal holds one run."""
    refunded: list[tuple[str, float]] = []

    @tool(effect="irreversible")
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        refunded.append((order, amount_usd))
        return "refunded"

    store = SqliteStore(tmp_path / "runs.db")
    model = infer_model(real_model.model_string, base_url=real_model.base_url, timeout=120)
    agent = Agent(
        model,
        name="support",
        tools=[refund],
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=2,
        store=store,
        memory=None,
    )
    meta = {KEY_META: "refund-A-7"}
    async with served(create_app(agent, mcp=True)) as url, mcp_client(url + "/mcp") as client:
        first = await client.call_tool("support", {"input": ASK}, meta=meta)
        again = await client.call_tool("support", {"input": ASK}, meta=meta)
    answered = first.structured_content
    assert answered is not None and again.structured_content is not None
    assert again.structured_content["run_id"] == answered["run_id"]
    assert refunded == []
    [run_id] = {row.run_id for row in await store.list_runs(limit=10)}
    state = RunState.from_events(await store.load(run_id))
    assert state is not None and run_id == answered["run_id"] and state.status.value == answered["status"]
    if state.status.value == "awaiting_approval":
        [waiting] = answered["awaiting_approval"]
        assert waiting["tool"] == "refund" and isinstance(waiting["arguments"], dict)
        assert not first.is_error
    elif state.status.value in ("failed", "budget_exceeded", "cancelled"):
        assert first.is_error
    else:
        assert state.status.value == "completed" and not first.is_error
