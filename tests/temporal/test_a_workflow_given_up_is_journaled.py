"""A workflow Temporal gave up on is journaled as `run_failed`: the journal never says `running` for good.

Terminated while a caller waits, the caller's engine records it; terminated with nobody
waiting, `eudaimon runs list --check` (and a worker at start, and the server's recovery
through `resume`) records it. A run that waited for an approval when its workflow was
terminated is recorded so too (by `--check`, and by a server's recovery sweep, which asks
Temporal once what closed rather than once per waiting run), and the approval that comes after
is refused, saying why: recorded, it would have left the run `running` with nothing to drive
it, and the operator told that it goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _fleet import in_process_worker, worker_process
from fleet_agent import make
from temporalio.client import Client
from typer.testing import CliRunner

from eudaimon import Agent
from eudaimon.cli.app import app
from eudaimon.errors import InvalidOperation, RunFailedError
from eudaimon.server.context import ServerContext
from eudaimon.server.driving import Runner
from eudaimon.server.hub import Hub
from eudaimon.server.recovery import recover_forever
from eudaimon.temporal import TemporalEngine
from eudaimon.temporal._gave_up import WORKFLOW_CLOSED


async def _held_run(agent: Agent, ledger: Path, run_id: str) -> asyncio.Future[Any]:
    prompt: asyncio.Future[Any] = asyncio.ensure_future(agent.prompt("hold lookup", run_id=run_id))
    while not ledger.exists() and not prompt.done():
        await asyncio.sleep(0.05)
    return prompt


async def test_a_terminated_workflow_fails_its_run_for_the_waiting_caller(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        prompt = await _held_run(agent, ledger, "run_terminated")
        await client.get_workflow_handle("run_terminated").terminate("an operator stopped it")
        with pytest.raises(RunFailedError) as raised:
            await prompt
        gate.unlink()
        assert raised.value.run_id == "run_terminated"
        state = await agent.state("run_terminated")
        assert state.status == "failed"
        assert "terminated" in (state.error or "") and "workflow id run_terminated" in (state.error or "")
        failed_at = state.next_seq - 1  # the fork the error names keeps everything before the failure
        assert f"eudaimon runs fork run_terminated --at {failed_at - 1}" in (state.error or "")
        [failed] = [e.data for e in await agent.store.load("run_terminated") if e.type == "run_failed"]
        assert failed.exception == WORKFLOW_CLOSED  # type: ignore[union-attr]
        await agent.aclose()


async def test_runs_list_check_journals_a_workflow_terminated_with_nobody_waiting(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        prompt = await _held_run(agent, ledger, "run_orphaned")
        prompt.cancel()  # the caller went away; the workflow goes on
        with contextlib.suppress(asyncio.CancelledError):
            await prompt
        await client.get_workflow_handle("run_orphaned").terminate("an operator stopped it")
        gate.unlink()
        assert (await agent.state("run_orphaned")).status == "running"
        result = await asyncio.to_thread(
            CliRunner().invoke, app, ["runs", "list", "--check", "--store", store_url], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        assert "run_orphaned" in result.output and "journaled as failed" in result.output
        state = await agent.state("run_orphaned")
        assert state.status == "failed" and "terminated" in (state.error or "")
        await agent.aclose()


async def test_a_worker_at_start_journals_a_workflow_terminated_while_none_ran(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path, tmp_path: Path
) -> None:
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        prompt = await _held_run(agent, ledger, "run_unseen")
        prompt.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await prompt
        await client.get_workflow_handle("run_unseen").terminate("an operator stopped it")
    gate.unlink()
    assert (await agent.state("run_unseen")).status == "running"
    worker = worker_process(temporal_target, task_queue, store_url, tmp_path / "worker.log")
    try:
        for _ in range(300):
            if (await agent.state("run_unseen")).status == "failed":
                break
            await asyncio.sleep(0.1)
        state = await agent.state("run_unseen")
        assert state.status == "failed" and "terminated" in (state.error or ""), (tmp_path / "worker.log").read_text()
    finally:
        worker.terminate()
        worker.wait(20)
        await agent.aclose()


async def _waiting_on_a_terminated_workflow(client: Client, agent: Agent) -> tuple[str, str]:
    """A run that waits for the approval of a wire, its workflow then terminated."""
    waiting = await agent.prompt("wire money")
    assert waiting.status == "awaiting_approval"
    [asked] = waiting.pending_approvals
    await client.get_workflow_handle(waiting.run_id).terminate("an operator cleaned up")
    return waiting.run_id, asked.id


async def test_runs_list_check_journals_a_waiting_run_whose_workflow_was_terminated(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        run_id, _ = await _waiting_on_a_terminated_workflow(client, agent)
    assert (await agent.state(run_id)).status == "awaiting_approval"
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["runs", "list", "--check", "--store", store_url], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert run_id in result.output and "journaled as failed" in result.output
    state = await agent.state(run_id)
    assert state.status == "failed" and "terminated" in (state.error or "")
    await agent.aclose()


async def test_an_approval_after_the_workflow_was_terminated_is_refused_and_the_run_failed(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        run_id, call_id = await _waiting_on_a_terminated_workflow(client, agent)
        with pytest.raises(InvalidOperation, match="terminated") as refused:
            await agent.approve(run_id, call_id, True, by="ops")
        assert "not recorded" in str(refused.value)
        state = await agent.state(run_id)
        assert state.status == "failed" and "terminated" in (state.error or "")
        types = [e.type for e in await agent.store.load(run_id)]
        assert "approval_decided" not in types and types[-1] == "run_failed"
        assert not ledger.exists() or "wire" not in ledger.read_text()  # nothing was wired
        await agent.aclose()


async def test_a_servers_recovery_journals_a_waiting_run_whose_workflow_was_terminated(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Invariant: a server serving the agent journals the run as failed at its next sweep,
    from one listing of what Temporal closed: a look from before the terminate finds it, one
    from after does not."""
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=engine)
        run_id, _ = await _waiting_on_a_terminated_workflow(client, agent)
    assert (await agent.state(run_id)).status == "awaiting_approval"
    assert await engine.record_closed(agent.store, {agent.name}, datetime.now(UTC) + timedelta(minutes=5)) == []
    assert (await agent.state(run_id)).status == "awaiting_approval"
    hub = Hub(agent.store)
    ctx = ServerContext(agents={agent.name: agent}, store=agent.store, auth=None, hub=hub, runner=Runner(hub))
    sweeping = asyncio.create_task(recover_forever(ctx, 0.2))
    try:
        for _ in range(150):  # Temporal's visibility lists the terminated workflow within moments
            if (await agent.state(run_id)).status != "awaiting_approval":
                break
            await asyncio.sleep(0.1)
        state = await agent.state(run_id)
        assert state.status == "failed" and "terminated" in (state.error or "")
        assert [e.type for e in await agent.store.load(run_id)].count("run_failed") == 1
    finally:
        sweeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeping
        await ctx.runner.aclose()
        await agent.aclose()
