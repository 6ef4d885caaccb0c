"""A run on the fleet snapshots its state as a local run does, and a new execution loads it.

The append activity saves the run's state with the batch that crosses a multiple of the
agent's snapshot interval, in the same transaction, so `agent.state`, `resume` and the CLI
fold only the events after it; a workflow that continues as new loads that snapshot and the
events after it, not the whole journal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _fleet import activity_results, in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.codec import state_from_json
from eudaimon.temporal import TemporalEngine


@pytest.fixture(autouse=True)
def snapshot_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_SNAPSHOT_EVERY", "10")


async def test_the_fleet_writes_the_snapshots_a_local_run_writes(
    client: Client, temporal_target: str, task_queue: str, tmp_path: Path, ledger: Path
) -> None:
    local = make(store=f"sqlite:///{tmp_path / 'local.db'}")
    fleet_url = f"sqlite:///{tmp_path / 'fleet.db'}"
    async with in_process_worker(client, task_queue, fleet_url):
        fleet = make(store=fleet_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        here = await local.prompt("many lookups")
        there = await fleet.prompt("many lookups")
        mine = await local.store.load_snapshot(f"run:{here.run_id}")
        theirs = await fleet.store.load_snapshot(f"run:{there.run_id}")
        assert mine is not None and theirs is not None
        assert theirs.version == mine.version > 0
        local_state, fleet_state = state_from_json(mine.data), state_from_json(theirs.data)
        assert local_state is not None and fleet_state is not None
        assert fleet_state.next_seq == local_state.next_seq == theirs.version + 1
        assert [m.content for m in fleet_state.messages] == [m.content for m in local_state.messages]
        await local.aclose()
        await fleet.aclose()


async def test_a_continued_execution_loads_the_snapshot(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """After continuing as new, the load activity returned a state and only the events after it."""
    async with in_process_worker(client, task_queue, store_url):
        engine = TemporalEngine(temporal_target, task_queue=task_queue, continue_after_events=40)
        agent = make(store=store_url, engine=engine)
        response = await agent.prompt("many lookups")
        assert response.status == "completed"
        [loaded] = await activity_results(client, response.run_id, "eudaimon.load")
        assert loaded["state"] is not None
        state = state_from_json(loaded["state"])
        assert state is not None and state.next_seq > 0
        assert [e["seq"] for e in map(_json, loaded["events"])][:1] == [state.next_seq]
        await agent.aclose()


def _json(text: str) -> dict[str, object]:
    import json

    row: dict[str, object] = json.loads(text)
    return row
