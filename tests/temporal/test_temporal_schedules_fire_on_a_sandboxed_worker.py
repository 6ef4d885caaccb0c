"""A worker with Temporal's full workflow sandbox (`create_worker(..., sandboxed=True)`) fires
Temporal schedules too: the starter workflow is plain (a search attribute, one activity), and the
starter's activity runs outside the sandbox with the worker's own agent, so a slot starts its run
there as on a worker that passes eudaimon through."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.events import RunQueued
from eudaimon.runtime.process.schedules import Schedules, slot_run_id, temporal_schedule_id
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker


async def test_a_sandboxed_worker_starts_the_run_of_a_triggered_slot(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Invariant: on a sandboxed worker, a triggered Temporal schedule starts one run under
    `slot_run_id(schedule, Temporal's scheduled time)`, which completes with the principal
    `schedule:ID`, and the starter workflow completes returning that run id."""
    store = open_store(store_url)
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    agent = make(store=store, engine=engine)
    sid = f"sandboxed-{task_queue}"
    worker = create_worker(
        client, task_queue=task_queue, agent=agent, spec="fleet_agent:make", store=store, sandboxed=True
    )
    try:
        async with worker:
            await Schedules(store).add("fleet", "0 9 * * *", "read then write", schedule_id=sid, engine=engine.url)
            handle = client.get_schedule_handle(temporal_schedule_id(sid))
            await handle.trigger()
            for _ in range(1200):
                actions = (await handle.describe()).info.recent_actions
                if actions:
                    break
                await asyncio.sleep(0.1)
            [action] = actions
            started = client.get_workflow_handle(action.action.workflow_id)  # type: ignore[attr-defined]
            run_id = await asyncio.wait_for(started.result(), 120)
            assert run_id == slot_run_id(sid, action.scheduled_at)
            for _ in range(1200):
                events = await store.load(run_id)
                if events and events[-1].type in ("run_completed", "run_failed", "run_cancelled"):
                    break
                await asyncio.sleep(0.1)
            assert [e.type for e in events][:2] == ["run_queued", "run_started"]
            assert events[-1].type == "run_completed"
            first = events[0].data
            assert isinstance(first, RunQueued) and first.principal == f"schedule:{sid}"
            await Schedules(store).remove(sid)
    finally:
        await agent.aclose()
        await store.close()
