"""A caller waiting on its run costs the run's workflow no task and no history event of its own
beyond the Update it waits with; a READ call costs it no activity round trip.

`prompt()` through `TemporalEngine` starts the run's workflow and sends its `settled` Update in
one call (update-with-start): the Update is accepted in the workflow's first task, not on a task
of its own, and a run the engine starts takes every earlier release's patch without a marker
(`RunInput.patched`). A READ tool runs as a local activity (`RunInput.local_reads`): one marker
in the task that called it, where an activity and the task it ends took six events. So the
history of a run is its effects' tasks and nothing else: one workflow task to start, one after
each model call and WRITE call, the Update accepted and completed, a marker for each READ call
and for the local activity that appends the run's last batch — the fleet workload (two model
calls, one READ) in 21 events, where READ calls as activities made 26, and the caller's Update
on a task of its own and the patch markers 28–33.
"""

from __future__ import annotations

import json
from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make_forgetful
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine


async def test_the_update_arrives_with_the_start_and_no_patch_is_marked(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url, spec="fleet_agent:make_forgetful"):
        agent = make_forgetful(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        done = await agent.prompt("read then write")
        history = await client.get_workflow_handle(done.run_id).fetch_history()
        await agent.aclose()
    kinds = [e.event_type for e in history.events]
    tasks = kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    activities = kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
    assert tasks == activities + 1  # a task to start, then one per activity: none for the caller
    first_task_done = kinds.index(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    assert kinds[first_task_done + 1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert scheduled == ["eudaimon.model", "eudaimon.model", "eudaimon.tool", "eudaimon.model"]  # the WRITE's
    markers = [
        (e.marker_recorded_event_attributes.marker_name, local_activity_type(e))
        for e in history.events
        if e.HasField("marker_recorded_event_attributes")
    ]
    # The READ call, then the last batch's append; no patch marker.
    assert markers == [("core_local_activity", "eudaimon.tool"), ("core_local_activity", "eudaimon.append")]
    assert EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES not in kinds


def local_activity_type(event: HistoryEvent) -> str:
    """The activity type a local activity's marker records (its `data` detail, as JSON)."""
    data = event.marker_recorded_event_attributes.details["data"].payloads[0].data
    found: str = json.loads(data)["activity_type"]
    return found
