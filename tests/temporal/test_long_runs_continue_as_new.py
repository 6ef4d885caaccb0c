"""A long run's workflow continues as new, and its journal runs on across the boundary.

With a low `continue_after_events`, a run of twelve steps crosses into new executions of its
workflow several times. Each crossing happens at a step's end, with everything committed; the
new execution loads the run from the store. The journal must be the local run's, event for
event, gap-free; a caller waiting in `prompt` follows the run to its end; and a decision sent
to a run that waits after continuing reaches the execution that runs now.
"""

from __future__ import annotations

from pathlib import Path

from _fleet import in_process_worker, latest_input
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.codec import event_to_dict
from eudaimon.core.events import Event
from eudaimon.temporal import TemporalEngine


def engine(target: str, queue: str) -> TemporalEngine:
    return TemporalEngine(target, task_queue=queue, heartbeat_timeout_s=5, continue_after_events=40)


def comparable(events: list[Event]) -> list[dict[str, object]]:
    """Events without what differs between any two runs: ids (and digests of them), times,
    where the run was driven."""
    rows = []
    for event in events:
        row = event_to_dict(event)
        for key in (
            "run_id",
            "at",
            "request_id",
            "request_digest",
            "duration_ms",
            "engine",
            "messages",
            "idempotency_key",
        ):
            row.pop(key, None)
        rows.append(row)
    return rows


async def test_a_long_run_continues_as_new_and_journals_as_locally(
    client: Client, temporal_target: str, task_queue: str, tmp_path: Path, ledger: Path
) -> None:
    local = make(store=f"sqlite:///{tmp_path / 'local.db'}")
    fleet_url = f"sqlite:///{tmp_path / 'fleet.db'}"
    async with in_process_worker(client, task_queue, fleet_url):
        fleet = make(store=fleet_url, engine=engine(temporal_target, task_queue))
        here = await local.prompt("many lookups")
        there = await fleet.prompt("many lookups")
        assert there.status == here.status == "completed"
        assert there.text() == here.text()
        assert (await latest_input(client, there.run_id))["generation"] >= 2  # continued, more than once

        local_events = await local.store.load(here.run_id)
        fleet_events = await fleet.store.load(there.run_id)
        assert [e.seq for e in fleet_events] == list(range(len(fleet_events)))
        assert comparable(fleet_events) == comparable(local_events)
        ran = [line for line in ledger.read_text().splitlines() if there.run_id in line]
        assert len(ran) == 12  # no call ran twice across the boundaries
        await local.aclose()
        await fleet.aclose()


async def test_a_decision_reaches_a_run_that_continued_as_new(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Six steps, then an approval: the run waits in a later execution, and `approve` reaches it."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=engine(temporal_target, task_queue))
        waiting = await agent.prompt("lookups then wire")
        assert waiting.status == "awaiting_approval"
        assert (await latest_input(client, waiting.run_id))["generation"] >= 1
        [call] = waiting.pending_approvals
        await agent.approve(waiting.run_id, call.id, True, by="ops")
        assert await client.get_workflow_handle(waiting.run_id).result() == "completed"
        state = await agent.state(waiting.run_id)
        assert state.output is not None and state.output.endswith("wired to carol")
        events = await agent.store.load(waiting.run_id)
        assert [e.seq for e in events] == list(range(len(events)))
        assert [e.type for e in events].count("approval_decided") == 1
        await agent.aclose()
