"""Cancelling a run on Temporal is cancelling it in its workflow, and the journal says so.

A `CancellationToken` passed to `prompt`, `eudaimon runs cancel` and the HTTP cancel (both
`operations.cancel`) send the workflow the `cancel` Update, with who and why; cancelling the
workflow itself (from Temporal's own tools) does the same without them. Either way the loop
journals `run_cancelled` at its next check, exactly as a local cancellation does, a READ call
cut short is recorded as such, and the workflow ends: a run cancelled in the store alone would
leave its workflow waiting for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon import CancellationToken
from eudaimon.core.events import RunCancelled
from eudaimon.errors import Cancelled
from eudaimon.runtime.process import operations
from eudaimon.temporal import TemporalEngine


async def test_a_token_cancels_a_run_inside_a_tool(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """`prompt(cancel=token)`: cancelled mid-tool, the run ends `cancelled`, the WRITE after
    the READ never runs."""
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        token = CancellationToken()
        prompt = asyncio.ensure_future(agent.prompt("hold lookup", cancel=token))
        while not ledger.exists() and not prompt.done():
            await asyncio.sleep(0.05)
        token.cancel("the caller changed its mind")
        with pytest.raises(Cancelled) as raised:
            await prompt
        gate.unlink()
        run_id = raised.value.run_id
        assert run_id is not None
        events = await agent.store.load(run_id)
        types = [e.type for e in events]
        assert types[-1] == "run_cancelled"
        assert "charge" not in ledger.read_text()
        [cut] = [e.data for e in events if e.type == "tool_completed"]
        assert cut.is_error and "cancelled" in cut.output  # type: ignore[union-attr]
        assert events[-1].data.reason == "the caller changed its mind"  # type: ignore[union-attr]
        await agent.aclose()


@pytest.mark.parametrize("script", ["wire money", "hold lookup"], ids=["waiting", "inside a tool"])
async def test_a_cancel_from_outside_reaches_the_workflow(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path, script: str
) -> None:
    """`operations.cancel` (the CLI's and the server's) of a run waiting for approval, or held
    inside a READ: the workflow journals `run_cancelled` with who and why and ends; nothing
    after runs."""
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        run_id = f"run-cancelled-{script.replace(' ', '-')}"
        prompt = asyncio.ensure_future(agent.prompt(script, run_id=run_id))
        while not (ledger.exists() or prompt.done()):
            await asyncio.sleep(0.05)
        assert await operations.cancel(agent.store, run_id, reason="not today", by="ops") is None
        assert await asyncio.wait_for(client.get_workflow_handle(run_id).result(), 30) == "cancelled"
        gate.unlink()
        with contextlib.suppress(Cancelled):
            await prompt
        events = [e.data for e in await agent.store.load(run_id)]
        assert [(e.reason, e.by) for e in events if isinstance(e, RunCancelled)] == [("not today", "ops")]
        assert isinstance(events[-1], RunCancelled)
        ran = ledger.read_text() if ledger.exists() else ""
        assert "wire" not in ran and "charge" not in ran
        await agent.aclose()


async def test_cancelling_a_waiting_workflow_cancels_the_run(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A run waiting for approval, its workflow cancelled, is journaled `run_cancelled`."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        waiting = await agent.prompt("wire money")
        handle = client.get_workflow_handle(waiting.run_id)
        await handle.cancel()
        assert await handle.result() == "cancelled"
        state = await agent.state(waiting.run_id)
        assert state.status == "cancelled"
        assert "wire" not in (ledger.read_text() if ledger.exists() else "")
        await agent.aclose()
