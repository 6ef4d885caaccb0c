"""Smoke: a run prompted through a TemporalEngine completes, journaled in the store."""

from __future__ import annotations

from conftest import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine


async def test_prompt_on_temporal_completes(client: Client, temporal_target: str, task_queue: str, store_url: str, ledger) -> None:
    """A prompt on the fleet returns the same response a local run does."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        response = await agent.prompt("read then write")
        assert response.status == "completed", response
        assert response.text().startswith("done: value of a; charged 5")
        await agent.aclose()
