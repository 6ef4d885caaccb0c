"""A worker: polls a task queue, runs `RunWorkflow`s and the activities they ask for.

Every worker of a queue serves the same agent module: activities use this process's agent
(its model, its tools, its memory) and the journal's store.

By default (`sandboxed=False`) eudaimon and the package of the agent's module are passed
through Temporal's workflow sandbox with every third-party library, as the SDK documents
for libraries without workflow state: a workflow uses the worker's agent and the modules
imported once, and a run costs its decisions, not a fresh import of eudaimon (which took
seconds per run and timed workflow tasks out past a few dozen runs). eudaimon is
deterministic by construction (the pure fold and `next_step`; time, ids and effects come
through `_seams`), and that is checked where it belongs: recorded histories of every path
are replayed in CI under the strict restrictions (`sandbox_restrictions(..., strict=True)`),
where eudaimon is re-imported and its clocks and randomness are refused.

How workflows run (`sandbox`):

- `"off"` (the default): no sandbox at run time (Temporal's `UnsandboxedWorkflowRunner`).
  With eudaimon and the agent's module passed through, the sandbox checked nothing of them,
  and it cost most of a worker's CPU past the loop itself: every payload a workflow sends or
  receives asked the sandboxed instance for its serialization context through an `exec` of
  generated code (about a third of the worker's CPU at 100 runs in flight, measured with
  `benchmarks/fleet.py`), and every run built a sandboxed instance of its own.
- `"passthrough"`: Temporal's sandbox, eudaimon and the agent's module passed through (the
  sandbox then guards only code the agent's module imports from elsewhere).
- `"strict"` (or `sandboxed=True`): Temporal's full sandbox: eudaimon and the agent's module
  are imported again for every workflow run (and after every eviction from the worker's
  cache), which costs about a second of CPU per run.
"""

from __future__ import annotations

import functools
from importlib.metadata import packages_distributions
from typing import Any, Literal, get_args

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from eudaimon.agent import Agent
from eudaimon.agent._input import check_deps
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core import codec
from eudaimon.core.errors import ConfigurationError
from eudaimon.stores.base import EventStore
from eudaimon.temporal import _served
from eudaimon.temporal._activities import Activities
from eudaimon.temporal._scheduled import ScheduledWorkflow
from eudaimon.temporal._scheduled_start import ScheduledStarts
from eudaimon.temporal._workflow import RunWorkflow

SandboxMode = Literal["off", "passthrough", "strict"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)


@functools.cache
def third_party_modules() -> frozenset[str]:
    """Top-level modules of every installed distribution but eudaimon."""
    return frozenset(
        name
        for name, dists in packages_distributions().items()
        if name.isidentifier() and not any(d.lower() == "eudaimon" for d in dists)
    )


def sandbox_restrictions(agent_module: str, *, strict: bool = True) -> SandboxRestrictions:
    """Temporal's default restrictions, with third-party libraries passed through.

    `strict`: everything but eudaimon and the package of the agent's module is imported once,
    outside; those two are imported inside the sandbox, their clocks and randomness refused
    (what the replay of recorded histories and `create_worker(..., sandboxed=True)` use).
    Otherwise those two are passed through as well."""
    own = {"eudaimon", agent_module.split(".", 1)[0]}
    passed = third_party_modules() - own if strict else third_party_modules() | own
    return SandboxRestrictions.default.with_passthrough_modules(*passed)


def create_worker(
    client: Client,
    *,
    task_queue: str,
    agent: Agent,
    spec: str,
    store: EventStore,
    max_concurrent_activities: int = 200,
    max_concurrent_workflow_tasks: int = 100,
    max_cached_workflows: int = 2000,
    heartbeat_every_s: float = 1.0,
    deps: Any = None,
    sandboxed: bool = False,
    sandbox: SandboxMode = "off",
) -> Worker:
    """A worker serving `agent`, which the module `spec` (`MODULE:ATTR`) builds.

    Args:
        client: a connected Temporal client.
        task_queue: the queue the agent's `TemporalEngine` starts runs on.
        agent: the agent `spec` builds, loaded in this process: activities use it.
        spec: `MODULE:ATTR` — the workflow builds the agent from it inside the sandbox.
        store: the journal every run's events are appended to (PostgreSQL for a fleet).
        deps: what this worker's tools get as `ctx.deps` — live objects such as a database
            pool, which cannot travel — for runs whose own deps could not be sent (or that
            had none). Deps that serialize travel with their run and take precedence
            (`eudaimon.temporal._deps`). Required when the agent declares a `deps_type`.
        sandboxed: `sandbox="strict"`: Temporal's full workflow sandbox at run time (eudaimon
            and the agent's module imported again per workflow run, about a second of CPU each).
        sandbox: `"off"` (the default: workflows run unsandboxed with this worker's `agent`),
            `"passthrough"` (Temporal's sandbox, eudaimon and the agent's module passed
            through) or `"strict"`; see the module's docstring for what each costs.
        max_concurrent_activities: model calls, tools and journal appends run at once, and as
            many local activities (READ tools, appends no call carries) besides (200:
            a run holds at most one at a time on the fleet workload, and 1,000 runs in flight
            on two cores wait on the Temporal server, not on these slots).
        max_concurrent_workflow_tasks: workflow tasks (decisions) run at once (100: a task
            is a fraction of a millisecond of CPU without the sandbox, and more slots only
            queue on the GIL).
        max_cached_workflows: runs kept in memory between their tasks; a run evicted from the
            cache is replayed from its history on its next task. Hold every run in flight.

    Raises:
        ConfigurationError: the agent declares a `deps_type` and `deps` is missing or not one.
    """
    module = spec.partition(":")[0]
    mode = "strict" if sandboxed else sandbox
    if mode not in SANDBOX_MODES:
        raise ConfigurationError(f"sandbox={mode!r} is not one of {', '.join(SANDBOX_MODES)}")
    if agent.deps_type is not None:
        check_deps(agent.name, agent.deps_type, deps, "create_worker(..., deps=...) (`eudaimon worker --deps`)")
    _served.serve(agent.name, spec, has_deps=deps is not None, agent=None if mode == "strict" else agent)
    codec.prepare()  # every run reads and writes events: not inside the first run's workflow task
    driver = runtime_of(agent)
    activities = Activities(
        driver.config,
        store,
        remember=driver.remember if agent.memory is not None else None,
        heartbeat_every_s=heartbeat_every_s,
        deps=deps,
        deps_type=agent.deps_type,
    )
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[RunWorkflow, ScheduledWorkflow],  # the second: what Temporal Schedules start (`_scheduled`)
        activities=[*activities.all(), *ScheduledStarts(store, agent).all()],
        workflow_runner=_runner(module, mode),
        max_concurrent_activities=max_concurrent_activities,
        max_concurrent_local_activities=max_concurrent_activities,
        max_concurrent_workflow_tasks=max_concurrent_workflow_tasks,
        max_cached_workflows=max_cached_workflows,
    )


def _runner(module: str, mode: str) -> WorkflowRunner:
    if mode == "off":
        return UnsandboxedWorkflowRunner()
    return SandboxedWorkflowRunner(restrictions=sandbox_restrictions(module, strict=mode == "strict"))
