"""A worker: polls a task queue, runs `RunWorkflow`s in the sandbox and the activities they ask for.

Every worker of a queue serves the same agent module: activities use this process's agent
(its model, its tools, its memory) and the journal's store; workflows build the agent again
inside Temporal's sandbox from the same module, so that the loop's decisions are replayable.
Third-party libraries are passed through the sandbox, as Temporal's SDK documents for
libraries without workflow state; eudaimon itself, and the agent's module, are not.
"""

from __future__ import annotations

import functools
from importlib.metadata import packages_distributions
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from eudaimon.agent import Agent
from eudaimon.agent._agent import runtime_of
from eudaimon.agent._input import check_deps
from eudaimon.stores.base import EventStore
from eudaimon.temporal import _served
from eudaimon.temporal._activities import Activities
from eudaimon.temporal._workflow import RunWorkflow


@functools.cache
def third_party_modules() -> frozenset[str]:
    """Top-level modules of every installed distribution but eudaimon."""
    return frozenset(
        name
        for name, dists in packages_distributions().items()
        if name.isidentifier() and not any(d.lower() == "eudaimon" for d in dists)
    )


def sandbox_restrictions(agent_module: str) -> SandboxRestrictions:
    """Temporal's default restrictions, with third-party libraries passed through: everything
    but eudaimon and the package of the agent's module is imported once, outside."""
    own = {"eudaimon", agent_module.split(".", 1)[0]}
    return SandboxRestrictions.default.with_passthrough_modules(*(third_party_modules() - own))


def create_worker(
    client: Client,
    *,
    task_queue: str,
    agent: Agent,
    spec: str,
    store: EventStore,
    max_concurrent_activities: int = 100,
    heartbeat_every_s: float = 1.0,
    deps: Any = None,
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

    Raises:
        ConfigurationError: the agent declares a `deps_type` and `deps` is missing or not one.
    """
    module = spec.partition(":")[0]
    if agent.deps_type is not None:
        check_deps(agent.name, agent.deps_type, deps, "create_worker(..., deps=...) (`eudaimon worker --deps`)")
    _served.serve(agent.name, spec, has_deps=deps is not None)
    driver = runtime_of(agent).driver
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
        workflows=[RunWorkflow],
        activities=activities.all(),
        workflow_runner=SandboxedWorkflowRunner(restrictions=sandbox_restrictions(module)),
        max_concurrent_activities=max_concurrent_activities,
    )
