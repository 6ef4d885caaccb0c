"""A run's deps on a fleet: those that serialize travel with the run, the workers bring the rest.

Tools run on workers, in other processes: a value passed as `prompt(deps=…)` reaches them only
if it can be sent. Deps that serialize (a dataclass of plain values) travel with the run's
workflow and are rebuilt as the agent's `deps_type`; live objects (a lock, as a pool holds)
stay behind and the workers' own deps (`create_worker(deps=…)`, `eudaimon worker --deps`)
stand in for them. A tool never silently gets `ctx.deps=None`: a run whose deps could not
travel, on a worker that has none, fails at once saying what to do.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _fleet import in_process_worker, worker_process
from fleet_agent import WORKER_WHO, Pool, Who, make_typed, make_untyped
from temporalio.client import Client

from eudaimon.errors import ConfigurationError, RunFailedError
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker


def engine(target: str, queue: str) -> TemporalEngine:
    return TemporalEngine(target, task_queue=queue, heartbeat_timeout_s=5)


async def test_deps_that_serialize_reach_the_tools_as_the_deps_type(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """`prompt(deps=Who("ann"))`: the worker's tool gets a `Who`, the caller's, not its own."""
    async with in_process_worker(client, task_queue, store_url, spec="fleet_agent:make_typed", deps=WORKER_WHO):
        agent = make_typed(store=store_url, engine=engine(temporal_target, task_queue))
        response = await agent.prompt("who am i", deps=Who("ann"))
        assert response.text() == "done: Who: ann via the prompt"
        events = await agent.store.load(response.run_id)
        assert "ann" not in str(events[0].data)  # deps are never journaled: only the tool said it
        await agent.aclose()


async def test_live_deps_stay_behind_and_the_workers_bring_their_own(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """Deps that cannot be serialized serve the caller; the tools get the worker's deps."""
    async with in_process_worker(client, task_queue, store_url, spec="fleet_agent:make_untyped", deps=WORKER_WHO):
        agent = make_untyped(store=store_url, engine=engine(temporal_target, task_queue))
        response = await agent.prompt("who am i", deps=Pool("ann", "the caller"))
        assert response.text() == "done: Who: the worker's user via the worker"
        await agent.aclose()


@pytest.mark.parametrize(
    ("deps", "says"),
    [
        (Pool("ann", "the caller"), "create_worker(..., deps=...)"),  # cannot travel, worker has none
        (Who("ann"), "declare deps_type="),  # travels as JSON, but nothing says it was a Who
    ],
)
async def test_deps_the_worker_cannot_give_fail_the_run_saying_what_to_do(
    client: Client, temporal_target: str, task_queue: str, store_url: str, deps: object, says: str
) -> None:
    """No tool runs with `ctx.deps=None` or a dict in place of the object: the run fails."""
    async with in_process_worker(client, task_queue, store_url, spec="fleet_agent:make_untyped"):
        agent = make_untyped(store=store_url, engine=engine(temporal_target, task_queue))
        with pytest.raises(RunFailedError) as raised:
            await agent.prompt("who am i", deps=deps)
        assert says in str(raised.value)
        assert raised.value.run_id is not None
        events = await agent.store.load(raised.value.run_id)
        assert "tool_started" not in [e.type for e in events]
        await agent.aclose()


async def test_a_worker_for_an_agent_with_a_deps_type_needs_deps(client: Client, store_url: str) -> None:
    """Refused when built, naming the option, rather than failing tools later."""
    store = open_store(store_url)
    agent = make_typed(store=store)
    with pytest.raises(ConfigurationError, match=r"create_worker\(\.\.\., deps=\.\.\.\)"):
        create_worker(client, task_queue="q", agent=agent, spec="fleet_agent:make_typed", store=store)
    await store.close()


async def test_the_worker_command_gives_its_tools_the_deps_it_names(
    temporal_target: str, task_queue: str, store_url: str, tmp_path: Path
) -> None:
    """`eudaimon worker --deps fleet_agent:WORKER_WHO` in its own process serves a run whose
    deps stayed in the caller."""
    log = tmp_path / "worker.log"
    extra = ("--deps", "fleet_agent:WORKER_WHO")
    worker = worker_process(temporal_target, task_queue, store_url, log, spec="fleet_agent:make_untyped", extra=extra)
    try:
        agent = make_untyped(store=store_url, engine=engine(temporal_target, task_queue))
        response = await asyncio.wait_for(agent.prompt("who am i", deps=Pool("ann", "the caller")), 120)
        assert response.text() == "done: Who: the worker's user via the worker", log.read_text()
        await agent.aclose()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
