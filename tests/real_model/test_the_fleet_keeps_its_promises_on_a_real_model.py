"""On a Temporal fleet, with a real model (llama-server and SmolLM2-135M): the refund the model
asks for waits for a human inside the workflow; approved, it runs once; with its workflow
terminated while it waits, the approval that comes after is refused, the run is journaled as
failed, and no refund runs. A lookup (READ) it asks for runs once, as a local activity in the
workflow's task, and its result is journaled before the model is asked again.

The model runs in the worker's activities and sends its call's arguments as JSON text, as
every provider does. It is tiny and may write no call or a broken one: those runs are checked
for running nothing, and the rest of the test is skipped, saying so.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
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

ASK_LOOKUP = (
    'Repeat exactly, nothing else: <tool_call>\n{"name": "look_up", "arguments": {"order": "A-7"}}\n</tool_call>'
)

REFUNDS: list[tuple[str, str]] = []
"""Every refund that ran, by the worker in this process: (run id, call id)."""


@tool(effect="irreversible")
def refund(order: str, amount_usd: float, ctx: ToolContext) -> str:
    """Refund an order (irreversible: a human approves it first)."""
    REFUNDS.append((ctx.run_id, ctx.call_id))
    return "refunded"


LOOKUPS: list[tuple[str, str, str]] = []
"""Every lookup that ran: (run id, call id, order)."""


@tool(effect="read")
def look_up(order: str, ctx: ToolContext) -> str:
    """Where an order is."""
    LOOKUPS.append((ctx.run_id, ctx.call_id, order))
    return f"order {order}: shipped"


@pytest.fixture(scope="module")
def temporal_target() -> Iterator[str]:
    yield from temporal_or_skip()


def _agent(
    real_model: RealModelServer, store: Any, engine: TemporalEngine | None = None, tools: Any = (refund,)
) -> Agent:
    return Agent(
        infer_model(real_model.model_string, base_url=real_model.base_url, timeout=120),
        tools=list(tools),
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=2,
        store=store,
        memory=None,
        name="real-refunds",
        engine=engine,
    )


@contextlib.asynccontextmanager
async def _on_a_fleet(
    real_model: RealModelServer, temporal_target: str, tmp_path: Path, build: Callable[..., Agent]
) -> AsyncIterator[tuple[Client, Any, Agent]]:
    """A worker serving `build`'s agent on a queue of its own, a SQLite journal, and a caller
    of the same agent through the fleet: (client, store, caller)."""
    client = await Client.connect(temporal_target)
    queue = f"real-{uuid.uuid4().hex[:8]}"
    store = open_store(f"sqlite:///{tmp_path / 'journal.db'}")
    served = build(real_model, store)
    caller = build(real_model, store, TemporalEngine(temporal_target, task_queue=queue))
    try:
        async with create_worker(
            client, task_queue=queue, agent=served, spec=f"{__name__}:{build.__name__}", store=store
        ):
            yield client, store, caller
    finally:
        await caller.aclose()
        await served.aclose()


@pytest.mark.parametrize("then", ["approved", "workflow terminated"])
async def test_a_refund_on_the_fleet_runs_once_approved_and_never_after_its_workflow_ended(
    real_model: RealModelServer, temporal_target: str, tmp_path: Path, then: str
) -> None:
    run_id = f"run-real-fleet-{uuid.uuid4().hex[:8]}"
    async with _on_a_fleet(real_model, temporal_target, tmp_path, _agent) as (client, store, caller):
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


def _reader(real_model: RealModelServer, store: Any, engine: TemporalEngine | None = None) -> Agent:
    return _agent(real_model, store, engine, tools=(look_up,))


async def test_a_lookup_on_the_fleet_runs_once_in_the_workflow_task_and_is_journaled(
    real_model: RealModelServer, temporal_target: str, tmp_path: Path
) -> None:
    run_id = f"run-real-read-{uuid.uuid4().hex[:8]}"
    async with _on_a_fleet(real_model, temporal_target, tmp_path, _reader) as (client, store, caller):
        await caller.prompt(ASK_LOOKUP, run_id=run_id)
        history = await client.get_workflow_handle(run_id).fetch_history()
        events = [e.data for e in await store.load(run_id)]
    mine = [(c, order) for r, c, order in LOOKUPS if r == run_id]
    called = [c for e in events if isinstance(e, ModelCalled) for c in e.message.tool_calls if c.name == "look_up"]
    if not called:
        assert mine == [] and not any(isinstance(e, ToolStarted) for e in events)
        pytest.skip("the model asked for no lookup this time; nothing ran")
    assert all(isinstance(c.arguments, str) for c in called)  # JSON text, as the server sent it
    done = {e.call_id: e for e in events if isinstance(e, ToolCompleted)}
    ran = [c for c in called if c.id in done and not done[c.id].is_error]
    assert [c for c, _ in mine] == [c.id for c in ran]  # each valid call ran once, a broken one never
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert "eudaimon.tool" not in scheduled  # no round trip through the server for a READ call
    markers = sum(e.HasField("marker_recorded_event_attributes") for e in history.events)
    assert markers >= len(ran) + 1  # a local activity's marker for each call, and the last append
