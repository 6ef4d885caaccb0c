"""`Agent(on_change="refuse")` holds for a run driven by the Temporal engine too: a changed agent
refuses to resume or decide a run the fleet drives, and nothing is recorded or sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import answer, charge, dump, lookup, make, snap
from temporalio.client import Client

from eudaimon import Agent, ToolContext, tool
from eudaimon.errors import AgentChanged
from eudaimon.models import FunctionModel
from eudaimon.temporal import TemporalEngine


@tool(effect="irreversible")
def wire(to: str, amount: int, ctx: ToolContext) -> str:
    """Wire money to someone: v2 takes an amount, and says the wire cannot be taken back."""
    raise AssertionError("v2's wire must never run")


async def test_a_refusing_agent_raises_agent_changed_for_a_fleet_run(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Invariant: paused for approval on the fleet under v1; v2 (`wire` changed) with
    `on_change="refuse"` raises `AgentChanged` on resume and on approve, and the journal holds
    what it held."""
    async with in_process_worker(client, task_queue, store_url):
        engine = TemporalEngine(temporal_target, task_queue=task_queue)
        v1 = make(store=store_url, engine=engine, version="v1")
        waiting = await v1.prompt("wire money")
        assert waiting.status == "awaiting_approval"
        [call] = waiting.pending_approvals
        before = len(await v1.store.load(waiting.run_id))

        v2 = Agent(
            FunctionModel(answer, model_id="fleet-model"),
            tools=[lookup, charge, wire, dump, snap],
            name="fleet",
            store=store_url,
            engine=engine,
            version="v2",
            on_change="refuse",
        )
        with pytest.raises(AgentChanged) as raised:
            await v2.resume(waiting.run_id)
        assert any(change.startswith("tool wire:") for change in raised.value.changes)
        with pytest.raises(AgentChanged):
            await v2.approve(waiting.run_id, call.id, True, by="ops")
        assert len(await v1.store.load(waiting.run_id)) == before
        assert (await v1.state(waiting.run_id)).status == "awaiting_approval"
        await v2.aclose()
        await v1.aclose()
