"""What a run stashed in the store (big payloads kept out of Temporal's history) is deleted
once its workflow has finished, however the run ended: completed, failed or cancelled."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon import CancellationToken
from eudaimon.core.events import ToolCompleted
from eudaimon.errors import Cancelled, RunFailedError
from eudaimon.temporal import TemporalEngine


def stashed(store_url: str, run_id: str) -> int:
    """Rows of the run's stash in the SQLite store."""
    with sqlite3.connect(store_url.removeprefix("sqlite:///")) as db:
        row = db.execute("SELECT count(*) FROM snapshots WHERE key LIKE ?", (f"run:{run_id}~blob~%",)).fetchone()
        return int(row[0])


async def test_a_completed_run_leaves_no_stash(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        response = await agent.prompt("big output")
        assert await client.get_workflow_handle(response.run_id).result() == "completed"
        assert stashed(store_url, response.run_id) == 0
        [completed] = [e.data for e in await agent.store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
        assert len(completed.output) == 3_000_000  # the journal holds the content, not a reference
        await agent.aclose()


async def test_a_failed_run_leaves_no_stash(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        with pytest.raises(RunFailedError) as raised:
            await agent.prompt("big then break")
        run_id = raised.value.run_id
        assert run_id is not None
        assert await client.get_workflow_handle(run_id).result() == "failed"
        assert stashed(store_url, run_id) == 0
        await agent.aclose()


async def test_a_cancelled_run_leaves_no_stash(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """While the run is held in its second tool the big output is stashed; cancelled, it is gone."""
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        token = CancellationToken()
        prompt = asyncio.ensure_future(agent.prompt("big then hold", cancel=token))
        while not (ledger.exists() and "gate-read" in ledger.read_text()) and not prompt.done():
            await asyncio.sleep(0.05)
        [summary] = await agent.store.list_runs(limit=1)
        assert stashed(store_url, summary.run_id) >= 1
        token.cancel("stop")
        with pytest.raises(Cancelled):
            await prompt
        gate.unlink()
        assert await client.get_workflow_handle(summary.run_id).result() == "cancelled"
        assert stashed(store_url, summary.run_id) == 0
        await agent.aclose()
