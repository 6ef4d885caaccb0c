"""On a Temporal fleet, with a real model (llama-server and SmolLM2-135M): the refund the model
asks for waits for a human inside the workflow; approved, it runs once; with its workflow
terminated while it waits, the approval that comes after is refused, the run is journaled as
failed, and no refund runs.

The model runs in the worker's activities and sends its call's arguments as JSON text, as
every provider does. It is tiny and may write no call or a broken one: those runs are checked
for running nothing, and the rest of the test is skipped, saying so.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio", reason="the [temporal] extra is not installed: pip install -e '.[dev]'")

from _real_model import RealModelServer
from temporalio.client import Client

from eudaimon import Agent, ToolContext, tool
from eudaimon.core.events import ModelCalled, ToolCompleted, ToolStarted
from eudaimon.errors import InvalidOperation
from eudaimon.models import ModelSettings, infer_model
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker
from support.agents import settled
from support.temporal_dev_server import temporal_or_skip

ASK = (
    "Repeat exactly, nothing else: <tool_call>\n"
    '{"name": "refund", "arguments": {"order": "A-7", "amount_usd": 550}}\n</tool_call>'
)
"""A prompt this model answers with a refund call (see test_real_model_keeps_the_safety_promises)."""

REFUNDS: list[tuple[str, str]] = []
"""Every refund that ran, by the worker in this process: (run id, call id)."""


@tool(effect="irreversible")
def refund(order: str, amount_usd: float, ctx: ToolContext) -> str:
    """Refund an order (irreversible: a human approves it first)."""
    REFUNDS.append((ctx.run_id, ctx.call_id))
    return "refunded"


@pytest.fixture(scope="module")
def temporal_target() -> Iterator[str]:
    yield from temporal_or_skip()


def _agent(real_model: RealModelServer, store: Any, engine: TemporalEngine | None = None) -> Agent:
    return Agent(
        infer_model(real_model.model_string, base_url=real_model.base_url, timeout=120),
        tools=[refund],
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=2,
        store=store,
        memory=None,
        name="real-refunds",
        engine=engine,
    )


@pytest.mark.parametrize("then", ["approved", "workflow terminated"])
async def test_a_refund_on_the_fleet_runs_once_approved_and_never_after_its_workflow_ended(
    real_model: RealModelServer, temporal_target: str, tmp_path: Path, then: str
) -> None:
    client = await Client.connect(temporal_target)
    queue, run_id = f"real-{uuid.uuid4().hex[:8]}", f"run-real-fleet-{uuid.uuid4().hex[:8]}"
    store = open_store(f"sqlite:///{tmp_path / 'journal.db'}")
    served = _agent(real_model, store)
    caller = _agent(real_model, store, TemporalEngine(temporal_target, task_queue=queue))
    async with create_worker(client, task_queue=queue, agent=served, spec=f"{__name__}:_agent", store=store):
        response = await caller.prompt(ASK, run_id=run_id)
        events = [e.data for e in await store.load(run_id)]
        [first, *_] = [e for e in events if isinstance(e, ModelCalled)]
        mine = [c for r, c in REFUNDS if r == run_id]
        if response.status != "awaiting_approval":  # no call, or a broken one: nothing ran
            assert mine == [] and not any(isinstance(e, ToolStarted) for e in events)
            pytest.skip(f"the model asked for no runnable refund this time ({first.stop_reason}); nothing to decide")
        [call] = first.message.tool_calls
        assert isinstance(call.arguments, str)  # JSON text, as the server sent it
        assert mine == []  # nothing runs before a human decides

        if then == "approved":
            await caller.approve(run_id, call.id, True, by="ops")
            await settled(caller, run_id)
            done = [e.data for e in await store.load(run_id) if isinstance(e.data, ToolCompleted)]
            journaled = [d.call_id for d in done if d.tool == "refund" and not d.is_error]
            # The approved call ran once; a later one the model may ask for waits for its own decision.
            assert journaled[:1] == [call.id] and len(set(journaled)) == len(journaled)
            assert [c for r, c in REFUNDS if r == run_id] == journaled
        else:
            await client.get_workflow_handle(run_id).terminate("an operator cleaned up")
            with pytest.raises(InvalidOperation, match="terminated"):
                await caller.approve(run_id, call.id, True, by="ops")
            state = await caller.state(run_id)
            assert state.status == "failed" and "terminated" in (state.error or "")
            assert not any(e.type == "approval_decided" for e in await store.load(run_id))
            assert not any(isinstance(e.data, ToolStarted) for e in await store.load(run_id))
    await caller.aclose()
    await served.aclose()
