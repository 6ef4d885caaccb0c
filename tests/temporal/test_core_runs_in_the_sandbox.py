"""`eudaimon.core` imports and runs inside Temporal's workflow sandbox, not passed through.

The workflow sandbox re-imports every module not passed through and forbids the clock,
randomness and I/O at run time. The restrictions a worker uses pass third-party libraries
through (as the SDK documents) and nothing of eudaimon, so the fold and the decisions run
as sandboxed workflow code: this probe folds old journals there and asks `next_step`.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from core_probe import CoreProbe
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from eudaimon.core import RunState
from eudaimon.core.codec import state_to_json
from eudaimon.core.decide import DecideConfig, next_step
from eudaimon.temporal import sandbox_restrictions

JOURNALS = Path(__file__).parents[1] / "journal" / "fixtures" / "v1"


def test_worker_restrictions_pass_nothing_of_eudaimon_through() -> None:
    """No eudaimon module is passed through, and Temporal's default restrictions stand."""
    restrictions = sandbox_restrictions("fleet_agent")
    assert not [m for m in restrictions.passthrough_modules if m == "eudaimon" or m.startswith("eudaimon.")]
    assert "fleet_agent" not in restrictions.passthrough_modules
    assert "pydantic" in restrictions.passthrough_modules
    assert restrictions.invalid_module_members is SandboxRestrictions.invalid_module_members_default


@pytest.mark.parametrize("journal", sorted(p.name for p in JOURNALS.glob("*.jsonl")))
async def test_core_folds_and_decides_inside_the_sandbox(client: Client, journal: str) -> None:
    """Inside the sandbox, core is its own copy, and it folds and decides as outside does."""
    rows = [line for line in (JOURNALS / journal).read_text().splitlines() if line.strip()]
    queue = f"probe-{uuid.uuid4().hex[:8]}"
    runner = SandboxedWorkflowRunner(restrictions=sandbox_restrictions("core_probe"))
    async with Worker(client, task_queue=queue, workflows=[CoreProbe], workflow_runner=runner):
        result = await client.execute_workflow(CoreProbe.run, rows, id=queue, task_queue=queue)

    from eudaimon.core.codec import event_from_json

    outside = RunState.from_events([event_from_json(r) for r in rows])
    assert outside is not None
    assert result["run_state_id"] != str(id(RunState))  # re-imported in the sandbox, not passed through
    assert result["status"] == outside.status.value
    assert result["step"] == type(next_step(outside, DecideConfig())).__name__
    assert result["state"] == state_to_json(outside)
