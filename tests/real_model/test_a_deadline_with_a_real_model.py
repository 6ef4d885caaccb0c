"""An approval deadline with a real model (the shared llama-server): when nobody decides, the
model is shown "no decision within 1s" as the call's result and the run goes on, wherever the
model's answer leads. Skipped, saying so, while the shared server does not answer: this test
never starts or stops it."""

from __future__ import annotations

import asyncio
import os

import pytest
from _real_model import RealModelServer, answers, background_start_failed

from eudaimon import Agent, ModelSettings, tool
from eudaimon.core.events import ApprovalRequested, ApprovalTimedOut
from eudaimon.models.registry import infer_model
from eudaimon.runtime.process import timers
from eudaimon.stores import MemoryStore


def _shared_server() -> RealModelServer:
    port = int(os.environ.get("EUDAIMON_TEST_LLM_PORT", "8088"))
    failed = background_start_failed()
    if failed is None and answers(port):
        return RealModelServer(port)
    why = failed or "does not answer (this test never starts it)"
    pytest.skip(f"the shared real model server on port {port}: {why}")


ASK = (
    "Repeat exactly, nothing else: <tool_call>\n"
    '{"name": "send_wire", "arguments": {"to": "bob", "amount_usd": 5}}\n</tool_call>'
)
"""The tiny model copies a call it is shown far more often than it writes one of its own."""


async def test_a_real_models_call_denied_by_its_deadline_reads_no_decision_within() -> None:
    """Invariant: the call the model made waits with a 1 s deadline; the sweep journals
    `approval_timed_out` once; the resumed run's tool result says "no decision within 1s" and
    the run ends (completed, or failed only by the tiny model's iteration limit)."""
    server = _shared_server()

    @tool(requires_approval=True, approval_timeout_s=1)
    def send_wire(to: str, amount_usd: float) -> str:
        """Send money by wire."""
        raise AssertionError("a call denied by its deadline never runs")

    model = infer_model(server.model_string, base_url=server.base_url, timeout=120)
    agent = Agent(
        model,
        tools=[send_wire],
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=2,
        store=MemoryStore(),
        memory=None,
    )
    try:
        paused = await agent.prompt(ASK)
        asked = [e.data for e in await agent.store.load(paused.run_id) if isinstance(e.data, ApprovalRequested)]
        if paused.status != "awaiting_approval":
            pytest.skip(f"the tiny model wrote no usable call this time (status {paused.status})")
        assert asked[0].deadline is not None
        await asyncio.sleep(1.1)
        fired = await timers.fire_due(agent.store)
        done = await agent.resume(paused.run_id)
    finally:
        await model.aclose()  # type: ignore[attr-defined]

    assert [f.run_id for f in fired] == [paused.run_id]
    events = [e.data for e in await agent.store.load(paused.run_id)]
    assert sum(isinstance(e, ApprovalTimedOut) for e in events) == 1
    state = await agent.state(paused.run_id)
    results = [m.content for m in state.messages if m.role == "tool"]
    assert any("no decision within 1s" in r for r in results), results
    assert done.status in ("completed", "failed")
