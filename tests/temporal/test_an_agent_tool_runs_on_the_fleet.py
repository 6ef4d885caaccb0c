"""An agent used as a tool (`as_tool`) on the fleet: its child run is driven in the parent
call's tool activity (`temporal/_children.py`), journaled in the parent's store under the
derived id and linked both ways, exactly as locally."""

from __future__ import annotations

import json
from pathlib import Path

import fleet_agent
from temporalio.client import Client

from eudaimon.core.events import ApprovalRequested, RunStarted, ToolCompleted
from eudaimon.runtime.loop.scope import child_run_id
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker


async def test_a_child_run_answers_the_parent_on_the_fleet(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    store = open_store(store_url)
    agent = fleet_agent.make_parent(store=store)
    async with create_worker(client, task_queue=task_queue, agent=agent, spec="fleet_agent:make_parent", store=store):
        parent = fleet_agent.make_parent(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        result = await parent.prompt("research gold")
        assert result.status == "completed", result
        assert result.output == "parent says: the child found: value of gold"

        child_id = child_run_id(result.run_id, "p0")
        child = await parent.state(child_id)
        assert child.status == "completed" and child.output == "the child found: value of gold"
        completed = [e.data for e in await parent.store.load(result.run_id) if isinstance(e.data, ToolCompleted)]
        assert [e.child_run_id for e in completed] == [child_id]
        started = (await parent.store.load(child_id))[0].data
        assert (
            isinstance(started, RunStarted)
            and started.parent_call is not None
            and started.parent_call.run_id == result.run_id
        )
        lines = [json.loads(line) for line in ledger.read_text().splitlines()]
        assert [(r["tool"], r["run"]) for r in lines] == [("lookup", child_id)]
        await parent.aclose()
    await store.close()


async def test_a_child_waiting_for_a_human_suspends_the_parent_call_on_the_fleet(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """The child's call waits for approval: so does the parent's call (naming the child), and
    approving on the parent decides in the child, releases the call, and the child's call runs once."""
    store = open_store(store_url)
    agent = fleet_agent.make_asking_parent(store=store)
    spec = "fleet_agent:make_asking_parent"
    async with create_worker(client, task_queue=task_queue, agent=agent, spec=spec, store=store):
        engine = TemporalEngine(temporal_target, task_queue=task_queue)
        parent = fleet_agent.make_asking_parent(store=store_url, engine=engine)
        waiting = await parent.prompt("pay bob")
        assert waiting.status == "awaiting_approval", waiting
        child_id = child_run_id(waiting.run_id, "p0")
        asked = [e.data for e in await parent.store.load(waiting.run_id) if isinstance(e.data, ApprovalRequested)]
        assert [(a.call_id, a.child_run_id) for a in asked] == [("p0", child_id)]
        assert not ledger.exists()  # nothing ran

        await parent.approve(waiting.run_id, "p0", True, by="ops")
        done = await parent.resume(waiting.run_id)
        assert done.status == "completed", done
        assert done.output == "parent says: the payer says: wired to bob"
        lines = [json.loads(line) for line in ledger.read_text().splitlines()]
        assert [(r["tool"], r["run"]) for r in lines] == [("wire", child_id)]
        await parent.aclose()
    await store.close()
