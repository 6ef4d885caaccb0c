"""Human decisions on a Temporal run are Updates to its workflow, from anywhere.

`eudaimon runs approve|deny` in another process reads `run_started.engine` from the store and
sends the decision to the workflow, which acts on it at once (no `resume` needed); the
workflow validates it, so deciding a call that is not waiting is refused and records nothing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from _fleet import HERE, in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.errors import InvalidOperation
from eudaimon.core.events import ApprovalDecided, ToolReconciled
from eudaimon.temporal import TemporalEngine


async def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "eudaimon", *args]
    return await asyncio.to_thread(subprocess.run, command, cwd=HERE, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("approved", [True, False])
async def test_cli_decision_in_another_process_unblocks_the_workflow(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path, approved: bool
) -> None:
    """An approval from the CLI runs the call; a denial reaches the model as denied."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        waiting = await agent.prompt("wire money")
        assert waiting.status == "awaiting_approval"
        [call] = waiting.pending_approvals

        verb = "approve" if approved else "deny"
        done = await _cli("runs", verb, waiting.run_id, call.id, "--store", store_url, "--by", "ops")
        assert done.returncode == 0, done.stdout + done.stderr
        # The workflow goes on by itself: its result is the run's final status.
        assert await client.get_workflow_handle(waiting.run_id).result() == "completed"

        state = await agent.state(waiting.run_id)
        wired = [line for line in ledger.read_text().splitlines() if '"wire"' in line] if ledger.exists() else []
        if approved:
            assert len(wired) == 1
            assert state.output == "done: wired to bob"
        else:
            assert wired == []
            assert state.output == "done: error: Tool call denied: denied by ops"
        events = await agent.store.load(waiting.run_id)
        decided = [e.data for e in events if e.type == "approval_decided"]
        assert [(d.approved, d.by) for d in decided] == [(approved, "ops")]  # type: ignore[union-attr]
        await agent.aclose()


async def test_a_decision_on_a_fork_no_workflow_drives_says_a_resume_starts_it(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A fork of a Temporal run has no workflow until a resume starts one: the CLI's approval
    is journaled and says that, with the resume to run, not that the run goes on by itself;
    the resume then runs the approved call once."""
    async with in_process_worker(client, task_queue, store_url):
        engine = TemporalEngine(temporal_target, task_queue=task_queue)
        agent = make(store=store_url, engine=engine)
        waiting = await agent.prompt("wire money")
        [call] = waiting.pending_approvals
        asked = next(e.seq for e in await agent.store.load(waiting.run_id) if e.type == "approval_requested")
        fork = await agent.fork(waiting.run_id, asked)

        done = await _cli("runs", "approve", fork, call.id, "--store", store_url, "--by", "ops")
        said = " ".join(done.stdout.split())
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"nothing on {engine.url} drives it now" in said, said
        assert f"eudaimon runs resume {fork}" in said and "goes on by itself" not in said

        assert (await agent.resume(fork)).status == "completed"
        wired = [line for line in ledger.read_text().splitlines() if '"wire"' in line and fork in line]
        assert len(wired) == 1
        await agent.aclose()


async def test_deciding_a_call_that_is_not_waiting_is_rejected(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """The workflow's validator refuses a decision on a call that is not waiting, with the
    reason, and records nothing; so does a second decision from the CLI once the run is on."""
    async with in_process_worker(client, task_queue, store_url):
        on_fleet = TemporalEngine(temporal_target, task_queue=task_queue)
        agent = make(store=store_url, engine=on_fleet)
        waiting = await agent.prompt("wire money")
        [call] = waiting.pending_approvals
        before = len(await agent.store.load(waiting.run_id))

        # Straight to the workflow, past the store-side check the CLI and `approve` make first.
        with pytest.raises(InvalidOperation, match="has no call 'nope' awaiting approval"):
            await on_fleet.decide(agent.store, waiting.run_id, ApprovalDecided(call_id="nope", approved=True))
        with pytest.raises(InvalidOperation, match="has no unknown outcome"):
            await on_fleet.decide(agent.store, waiting.run_id, ToolReconciled(call_id=call.id, output="x"))
        assert len(await agent.store.load(waiting.run_id)) == before

        await agent.approve(waiting.run_id, call.id, True, by="first")
        assert (await agent.resume(waiting.run_id)).status == "completed"
        after = len(await agent.store.load(waiting.run_id))
        with pytest.raises(InvalidOperation, match="takes no more decisions"):
            await agent.approve(waiting.run_id, call.id, False, by="second")
        refused = await _cli("runs", "deny", waiting.run_id, call.id, "--store", store_url)
        assert refused.returncode == 1
        assert "takes no more decisions" in refused.stdout + refused.stderr
        assert len(await agent.store.load(waiting.run_id)) == after
        await agent.aclose()


async def test_an_edited_approval_reaches_the_workflow_and_runs_the_edit(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """An approval with edited arguments is sent to the workflow with them: the call runs with
    the edit, and `approval_decided` records it."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        waiting = await agent.prompt("wire money")
        [call] = waiting.pending_approvals
        await agent.approve(waiting.run_id, call.id, True, by="ops", arguments={"to": "carol"})
        assert await client.get_workflow_handle(waiting.run_id).result() == "completed"
        state = await agent.state(waiting.run_id)
        assert state.output == "done: wired to carol"
        events = await agent.store.load(waiting.run_id)
        [decided] = [e.data for e in events if isinstance(e.data, ApprovalDecided)]
        assert decided.arguments == {"to": "carol"}
        assert decided.original_arguments == call.arguments != decided.arguments  # the edit is kept as one
        await agent.aclose()
