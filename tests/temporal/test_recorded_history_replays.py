"""Workflow determinism: a recorded history replays against today's code, and a divergent one
fails loudly.

`histories/wire_money_approved.json` is a real run (an approval Update, the tool, the
answer) recorded by `record_history.py` before content parts, snapshots, stash deletion and
continue-as-new; `picture_by_reference.json` a run with them (image parts by reference, the
stash deleted). Replaying it re-executes the workflow — the loop,
the fold, the decisions — in the sandbox against the recorded activity results: any change
that would make runs in flight fail on deploy fails here first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from eudaimon.temporal import RunWorkflow, sandbox_restrictions
from eudaimon.temporal._served import serve

HISTORIES = Path(__file__).parent / "histories"
FIXTURE = HISTORIES / "wire_money_approved.json"


def replayer() -> Replayer:
    serve("fleet", "fleet_agent:make")
    return Replayer(
        workflows=[RunWorkflow],
        workflow_runner=SandboxedWorkflowRunner(restrictions=sandbox_restrictions("fleet_agent")),
    )


@pytest.mark.parametrize("name", ["wire_money_approved", "picture_by_reference"])
async def test_recorded_history_replays_without_nondeterminism(name: str) -> None:
    """Today's workflow code makes the same decisions the recorded run made."""
    history = WorkflowHistory.from_json("recorded", (HISTORIES / f"{name}.json").read_text())
    result = await replayer().replay_workflow(history)
    assert result.replay_failure is None


async def test_a_divergent_history_fails_the_replay() -> None:
    """A history whose recorded tool activity is not what the code schedules is refused:
    the replay test above can fail."""
    doc = json.loads(FIXTURE.read_text())
    for event in doc["events"]:
        attributes = event.get("activityTaskScheduledEventAttributes")
        if attributes and attributes["activityType"]["name"] == "eudaimon.tool":
            attributes["activityType"]["name"] = "eudaimon.some_other_effect"
    history = WorkflowHistory.from_json("divergent", json.dumps(doc))
    with pytest.raises(Exception, match=r"(?i)nondetermin"):
        await replayer().replay_workflow(history)
