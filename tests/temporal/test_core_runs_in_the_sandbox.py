"""Where eudaimon runs in Temporal's workflow sandbox, and where its determinism is checked.

A default worker (`create_worker(..., sandboxed=False)`) passes eudaimon and the agent's
module through the sandbox, as Temporal's SDK documents for libraries without workflow state:
they are imported once per worker, not once per run. The strict restrictions
(`sandbox_restrictions(module)`, used by `sandboxed=True` and by the replay of recorded
histories) pass nothing of eudaimon through: there the fold and the decisions are imported and
run as sandboxed workflow code, and a clock or randomness in them is refused.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from core_probe import ClockProbe, CoreProbe
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from eudaimon.core import RunState
from eudaimon.core.codec import event_from_json, state_to_json
from eudaimon.core.decide import DecideConfig, next_step
from eudaimon.temporal import sandbox_restrictions

JOURNALS = Path(__file__).parents[1] / "journal" / "fixtures" / "v1"


def _eudaimon(modules: set[str] | frozenset[str]) -> list[str]:
    return [m for m in modules if m == "eudaimon" or m.startswith("eudaimon.")]


def test_strict_restrictions_pass_nothing_of_eudaimon_through() -> None:
    """No eudaimon module is passed through, and Temporal's default restrictions stand."""
    restrictions = sandbox_restrictions("fleet_agent")
    assert not _eudaimon(restrictions.passthrough_modules)
    assert "fleet_agent" not in restrictions.passthrough_modules
    assert "pydantic" in restrictions.passthrough_modules
    assert restrictions.invalid_module_members is SandboxRestrictions.invalid_module_members_default


def test_a_default_worker_passes_eudaimon_and_the_agent_module_through() -> None:
    """The worker's restrictions pass eudaimon and the agent's package through; the rest of
    Temporal's defaults (what a workflow may not call) stand."""
    restrictions = sandbox_restrictions("myapp.agents", strict=False)
    assert "eudaimon" in restrictions.passthrough_modules
    assert "myapp" in restrictions.passthrough_modules
    assert "pydantic" in restrictions.passthrough_modules
    assert restrictions.invalid_module_members is SandboxRestrictions.invalid_module_members_default


def _rows(journal: str) -> list[str]:
    return [line for line in (JOURNALS / journal).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("journal", sorted(p.name for p in JOURNALS.glob("*.jsonl")))
async def test_core_folds_and_decides_inside_the_strict_sandbox(client: Client, journal: str) -> None:
    """Under the strict restrictions core is its own copy, and it folds and decides as outside does."""
    rows = _rows(journal)
    queue = f"probe-{uuid.uuid4().hex[:8]}"
    runner = SandboxedWorkflowRunner(restrictions=sandbox_restrictions("core_probe"))
    async with Worker(client, task_queue=queue, workflows=[CoreProbe], workflow_runner=runner):
        result = await client.execute_workflow(CoreProbe.run, rows, id=queue, task_queue=queue)

    outside = RunState.from_events([event_from_json(r) for r in rows])
    assert outside is not None
    assert result["run_state_id"] != str(id(RunState))  # re-imported in the sandbox, not passed through
    assert result["status"] == outside.status.value
    assert result["step"] == type(next_step(outside, DecideConfig())).__name__
    assert result["state"] == state_to_json(outside)


async def test_a_default_worker_runs_the_core_imported_once(client: Client) -> None:
    """Passed through, the workflow's core is the worker's own module: no import per run."""
    rows = _rows(sorted(p.name for p in JOURNALS.glob("*.jsonl"))[0])
    queue = f"probe-{uuid.uuid4().hex[:8]}"
    runner = SandboxedWorkflowRunner(restrictions=sandbox_restrictions("core_probe", strict=False))
    async with Worker(client, task_queue=queue, workflows=[CoreProbe], workflow_runner=runner):
        result = await client.execute_workflow(CoreProbe.run, rows, id=queue, task_queue=queue)
    assert result["run_state_id"] == str(id(RunState))


async def test_the_strict_sandbox_refuses_a_clock_in_eudaimon(client: Client) -> None:
    """What the replay of recorded histories relies on: eudaimon's code reading the wall clock
    inside a workflow fails there."""
    queue = f"probe-{uuid.uuid4().hex[:8]}"
    runner = SandboxedWorkflowRunner(restrictions=sandbox_restrictions("core_probe"))
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[ClockProbe],
        workflow_runner=runner,
        workflow_failure_exception_types=[Exception],  # fail the workflow, not retry its task
    )
    async with worker:
        with pytest.raises(WorkflowFailureError) as failed:
            await client.execute_workflow(ClockProbe.run, id=queue, task_queue=queue)
    assert "restricted" in str(failed.value.cause).lower() or "cannot access" in str(failed.value.cause).lower()


async def test_a_sandboxed_worker_runs_a_run_under_the_strict_sandbox(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """`create_worker(..., sandboxed=True)` keeps Temporal's sandbox: the run goes as on a
    default worker, its agent built inside the sandbox from the module."""
    import fleet_agent

    from eudaimon.stores.url import open_store
    from eudaimon.temporal import TemporalEngine, create_worker

    store = open_store(store_url)
    served = fleet_agent.make(store=store)
    worker = create_worker(
        client, task_queue=task_queue, agent=served, spec="fleet_agent:make", store=store, sandboxed=True
    )
    async with worker:
        agent = fleet_agent.make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        done = await agent.prompt("read then write")
        await agent.aclose()
    await store.close()
    assert "charged 5" in done.output
    assert ledger.read_text().count('"charge"') == 1
