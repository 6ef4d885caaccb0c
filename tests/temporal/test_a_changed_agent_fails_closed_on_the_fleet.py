"""Resume across a change fails closed on the fleet too (`temporal/_change.py`): a run paused
for approval under v1 on a v1 worker, approved, then continued by a v2 worker whose tool
renamed its argument: `agent_replaced` is journaled, the approval is void (nothing ran, the
model is told), and a human is asked again, about the call v2 takes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import change_agent
import pytest
from temporalio.client import Client

from eudaimon.core.errors import RunFailedError
from eudaimon.core.events import AgentReplaced, ToolCompleted
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker
from support.agents import settled


@contextlib.asynccontextmanager
async def worker(client: Client, task_queue: str, store_url: str, attr: str) -> AsyncIterator[None]:
    store = open_store(store_url)
    agent = getattr(change_agent, attr)(store=store)
    async with create_worker(client, task_queue=task_queue, agent=agent, spec=f"change_agent:{attr}", store=store):
        yield
    await store.close()


def ran(ledger: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ledger.read_text().splitlines()] if ledger.exists() else []


async def test_an_approval_under_v1_is_void_when_a_v2_worker_continues_the_run(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    v1 = change_agent.make_v1(store=store_url, engine=engine)
    async with worker(client, task_queue, store_url, "make_v1"):
        waiting = await v1.prompt("pay bob")
        assert waiting.status == "awaiting_approval"
        [asked] = waiting.pending_approvals
        assert asked.arguments == {"to": "bob"}

    async with worker(client, task_queue, store_url, "make_v2"):
        # The human approves v1's call; the fleet now runs v2: the approval must not stand.
        await v1.approve(waiting.run_id, asked.id, True, by="ops")
        state = await settled(v1, waiting.run_id)
        assert state.status == "awaiting_approval", state.status
        assert ran(ledger) == []  # nothing ran
        events = [e.data for e in await v1.store.load(waiting.run_id)]
        [replaced] = [e for e in events if isinstance(e, AgentReplaced)]
        assert (replaced.previous_version, replaced.version) == ("v1", "v2")
        assert any(c.startswith("tool wire:") for c in replaced.changes)
        told = [e for e in events if isinstance(e, ToolCompleted) and e.call_id == asked.id]
        assert len(told) == 1 and told[0].is_error and "no longer validate" in told[0].output
        [again] = state.awaiting_approval()
        assert again.id != asked.id and again.arguments == {"recipient": "bob"}

        # A human is asked again, and approving v2's call runs it, once.
        v2 = change_agent.make_v2(store=store_url, engine=engine)
        await v2.approve(waiting.run_id, again.id, True, by="ops")
        done = await settled(v2, waiting.run_id)
        assert done.status == "completed", done.status
        assert [(r["tool"], r.get("recipient")) for r in ran(ledger)] == [("wire", "bob")]
        await v2.aclose()
    await v1.aclose()


async def test_a_refusing_worker_fails_the_workflow_and_runs_nothing(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A v2 worker with `on_change="refuse"` runs nothing and notes no change: the run's
    workflow fails, and the run is journaled as failed (`WorkflowClosed`)."""
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    v1 = change_agent.make_v1(store=store_url, engine=engine)
    async with worker(client, task_queue, store_url, "make_v1"):
        waiting = await v1.prompt("pay bob")
        [asked] = waiting.pending_approvals

    async with worker(client, task_queue, store_url, "make_v2_refusing"):
        await asyncio.wait_for(v1.approve(waiting.run_id, asked.id, True, by="ops"), 30)
        with pytest.raises(RunFailedError):
            await asyncio.wait_for(v1.resume(waiting.run_id), 30)
        assert (await v1.state(waiting.run_id)).status == "failed"
        events = [e.data for e in await v1.store.load(waiting.run_id)]
        assert not [e for e in events if isinstance(e, AgentReplaced)]
        assert ran(ledger) == []
    await v1.aclose()
