"""Model calls on Temporal follow the journaled provider retry rules, as locally.

The model activity is never retried by Temporal: a provider failure is rebuilt in the
workflow as the same `ModelError` class, and the loop retries it after a journaled
`model_retry_scheduled` (its backoff a durable timer), exactly as the local runtime does.
"""

from __future__ import annotations

import os
from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine


async def test_a_provider_outage_is_retried_and_journaled_like_locally(
    client: Client, temporal_target: str, task_queue: str, tmp_path: Path, ledger: Path
) -> None:
    """A 503 on the first try: `model_retry_scheduled` on both, the same event types, same answer."""
    outage = Path(os.environ["FLEET_GATES"]) / "model-down"
    local = make(store=f"sqlite:///{tmp_path / 'local.db'}")
    outage.touch()
    here = await local.prompt("read then write")
    fleet_url = f"sqlite:///{tmp_path / 'fleet.db'}"
    async with in_process_worker(client, task_queue, fleet_url):
        fleet = make(store=fleet_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        outage.touch()
        there = await fleet.prompt("read then write")
        assert there.status == here.status == "completed"
        assert there.text() == here.text()
        fleet_events = await fleet.store.load(there.run_id)
        local_events = await local.store.load(here.run_id)
        assert [e.type for e in fleet_events] == [e.type for e in local_events]
        [retry] = [e.data for e in fleet_events if e.type == "model_retry_scheduled"]
        assert "ModelUnavailable" in retry.error or "503" in retry.error  # type: ignore[union-attr]
        await fleet.aclose()
    await local.aclose()
