"""The approval rules through a real model server (llama.cpp's llama-server and SmolLM2-135M):
the call the model wrote (arguments as JSON text) waits for a human; a decision that is not a
bool is refused; an edit the approval policy denies is refused with nothing recorded; an edit
within it runs. The model is tiny: when it writes no usable call, there is nothing to decide.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _real_model import RealModelServer

from eudaimon import Agent, Tool, ToolCall, ToolPolicy, tool
from eudaimon.core.events import ApprovalDecided
from eudaimon.errors import EditDenied, InvalidOperation, RunError
from eudaimon.models import Model, ModelSettings, infer_model
from eudaimon.stores import MemoryStore

ASK = (
    "Repeat exactly, nothing else: <tool_call>\n"
    '{"name": "refund", "arguments": {"order": "A-7", "amount_usd": 550}}\n</tool_call>'
)


@pytest.fixture
async def model(real_model: RealModelServer) -> AsyncIterator[Model]:
    built = infer_model(real_model.model_string, base_url=real_model.base_url, timeout=120)
    yield built
    await built.aclose()  # type: ignore[attr-defined]


async def test_a_real_models_call_is_decided_by_a_bool_and_its_edit_by_the_policy(model: Model) -> None:
    """Invariant: `"false"` is refused; an edit to $50,000 is refused by the policy (nothing
    recorded, the call still waits); an edit to $90 is approved, journaled beside the model's
    arguments, and is what the tool gets."""
    refunded: list[Any] = []

    @tool(effect="write")
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        refunded.append(amount_usd)
        return "refunded"

    def policy(call: ToolCall, tool: Tool) -> ToolPolicy:
        amount = call.arguments.get("amount_usd", 0) if isinstance(call.arguments, dict) else 0
        return (
            ToolPolicy.DENY if not isinstance(amount, int | float) or amount > 10_000 else ToolPolicy.REQUIRE_APPROVAL
        )

    agent = Agent(
        model,
        tools=[refund],
        approval_policy=policy,
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=2,
        store=MemoryStore(),
        memory=None,
    )
    try:
        paused = await agent.prompt(ASK, run_id="run-real-edit")
        status = paused.status
    except RunError:
        status = (await agent.state("run-real-edit")).status
    if status != "awaiting_approval":
        pytest.skip(f"the model wrote no call that waits for a human this time ({status}); nothing to decide")
    [waiting] = (await agent.state("run-real-edit")).awaiting_approval()
    before = len(await agent.store.load("run-real-edit"))
    with pytest.raises(InvalidOperation):
        await agent.approve("run-real-edit", waiting.id, "false")  # type: ignore[arg-type]
    with pytest.raises(EditDenied):
        await agent.approve("run-real-edit", waiting.id, True, arguments={"order": "A-7", "amount_usd": 50_000})
    assert len(await agent.store.load("run-real-edit")) == before
    await agent.approve("run-real-edit", waiting.id, True, by="alice", arguments={"order": "A-7", "amount_usd": 90})
    with contextlib.suppress(RunError):  # max_iterations after the tool's result: the refund is what is judged
        await agent.resume("run-real-edit")
    assert refunded == [90]
    [decided] = [e.data for e in await agent.store.load("run-real-edit") if isinstance(e.data, ApprovalDecided)]
    assert decided.original_arguments == waiting.arguments and decided.arguments == {"order": "A-7", "amount_usd": 90}
