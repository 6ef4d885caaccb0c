"""A run a server queued (`run_queued` at seq 0) starts on the fleet like any run: the caller
appends its `run_started` at seq 1, the workflow folds the journal from seq 0 and drives it."""

from __future__ import annotations

from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.events import RunQueued
from eudaimon.runtime.process.queued import enqueue
from eudaimon.temporal import TemporalEngine


async def test_a_queued_run_starts_on_the_fleet(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        queued = RunQueued(
            agent="fleet", input="read then write", thread_id="t-q", memory_thread="t-q", principal="ann"
        )
        await enqueue(agent.store, "run_queued_fleet", queued)
        done = await agent.resume("run_queued_fleet")
        assert done.status == "completed"
        events = await agent.store.load("run_queued_fleet")
        assert [e.type for e in events[:3]] == ["run_queued", "run_started", "model_attempt_started"]
        assert [e.seq for e in events] == list(range(len(events)))
        state = await agent.state("run_queued_fleet")
        assert state.principal == "ann" and state.thread_id == "t-q" and state.engine
        await agent.aclose()
