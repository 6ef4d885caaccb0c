"""Cancelling a run on Temporal is cancelling its workflow, and the journal says so.

A `CancellationToken` passed to `prompt` cancels the run's workflow; cancelling the workflow
(from Temporal's own tools, or a waiting run) journals `run_cancelled` at the loop's next
check, exactly as a local cancellation does, and a READ call cut short is recorded as such.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon import CancellationToken
from eudaimon.errors import Cancelled
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
