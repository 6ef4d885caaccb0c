"""Workflow determinism: recorded histories of every path replay against today's code, under
Temporal's strict sandbox, and a divergent one fails loudly.

This is where eudaimon's determinism is checked, now that workers pass it through the sandbox:
the replayer imports eudaimon inside the sandbox (`sandbox_restrictions(module)`, strict), so a
clock, randomness or I/O in the workflow's code fails here, and a change to what the workflow
schedules fails here before it fails runs in flight on deploy.

- `histories/wire_money_approved.json`: a run recorded before content parts, snapshots, stash
  deletion and continue-as-new; `picture_by_reference.json`: the release with them.
- `histories/v2/`: the release before (every append an activity).
- `histories/v3/`: the release before that (eudaimon passed through, the model activity
  carrying its attempt's append, a batch no effect carries appended by a local activity).
- `histories/v4/`: the release before (the caller's `settled` Update delivered with the start,
  a run started with every earlier patch taking it without a marker).
- `histories/v5/`: this release (a READ call a local activity), one history per path of the
  loop: tools, parallel calls, an approval,
  a reconciliation, a retried model call, continue-as-new (both executions), a cancellation,
  an approval deadline fired by the workflow's timer and a `RetryAfter` woken by one (the
  `eudaimon.durable-timers` patch; the histories before it have no deadline and no marker), an
  approval awaited on a fresh execution (both), an agent used as a tool (`children`), and a
  sub-second `RetryAfter` that slept in the worker, no timer (`short_wake`, the
  `eudaimon.short-waits-sleep-in-the-worker` patch; the `wake` of v4 and v5 has a short timer
  and no marker).
  Recorded by `record_history.py`.
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
    serve("slowpay", "timed_fleet_agent:make_slowpay")
    serve("napper", "timed_fleet_agent:make_napper")
    serve("parent", "fleet_agent:make_parent")
    return Replayer(
        workflows=[RunWorkflow],
        workflow_runner=SandboxedWorkflowRunner(restrictions=sandbox_restrictions("fleet_agent")),
    )


RECORDED = sorted(str(p.relative_to(HISTORIES).with_suffix("")) for p in HISTORIES.rglob("*.json"))
PATHS = (
    "tools",
    "parallel",
    "approval",
    "reconciliation",
    "retry",
    "continue_as_new",
    "cancel",
    "deadline",
    "wake",
    "children",
)


def test_this_release_has_a_history_of_every_path() -> None:
    assert {f"v5/{path}" for path in PATHS} <= set(RECORDED)
    assert {f"v{release}/{path}" for release in (2, 3, 4) for path in PATHS} <= set(RECORDED)  # the releases before
    assert {"wire_money_approved", "picture_by_reference"} <= set(RECORDED)
    assert {"v4/short_wake", "v5/short_wake"} <= set(RECORDED)  # a short wait asleep in the worker


@pytest.mark.parametrize("name", RECORDED)
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
