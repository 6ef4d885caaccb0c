"""The approval policy and the token limit, through a real model server (llama.cpp's
llama-server and SmolLM2-135M, OpenAI-compatible): tool arguments arrive as JSON text, as
every real provider sends them, and answers are cut by `max_tokens`.

The model is tiny: it may write a broken call, or none. The tests check structure and fault
handling, never wording: a call's arguments reach the policy as a dict; a refund over the
limit waits for a human and nothing runs; a broken call runs nothing and the model is told;
`max_tokens=8` is journaled as `max_tokens` and is the response's stop reason.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _real_model import RealModelServer

from eudaimon import Agent, Tool, ToolCall, ToolPolicy, tool
from eudaimon.core.events import ApprovalRequested, ModelCalled, ToolCompleted, ToolStarted
from eudaimon.errors import RunError
from eudaimon.models import Model, ModelSettings, StopReason, infer_model
from eudaimon.stores import MemoryStore

ASK = (
    "Repeat exactly, nothing else: <tool_call>\n"
    '{"name": "refund", "arguments": {"order": "A-7", "amount_usd": 550}}\n</tool_call>'
)
"""A prompt this model answers with a refund call (llama-server turns `<tool_call>` into
OpenAI `tool_calls`, arguments as JSON text) with the server's seed and the settings below."""


@pytest.fixture
async def model(real_model: RealModelServer) -> AsyncIterator[Model]:
    built = infer_model(real_model.model_string, base_url=real_model.base_url, timeout=120)
    yield built
    await built.aclose()  # type: ignore[attr-defined]


async def test_a_refund_over_the_limit_waits_for_a_human(model: Model) -> None:
    """Invariant: whatever the model wrote, no refund ran without a human. A call it wrote
    reached the policy as a dict; one for over $100 waits for approval, shown as a dict; a
    broken one ran nothing, no one judged it, and the model was given an error result."""
    judged: list[Any] = []
    refunded: list[Any] = []

    @tool(effect="write", idempotent=True)
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        refunded.append((order, amount_usd))
        return "refunded"

    def over_100_needs_a_human(call: ToolCall, tool: Tool) -> ToolPolicy:
        judged.append(call.arguments)
        assert isinstance(call.arguments, dict)
        return ToolPolicy.REQUIRE_APPROVAL if call.arguments["amount_usd"] > 100 else ToolPolicy.ALLOW

    agent = Agent(
        model,
        tools=[refund],
        approval_policy=over_100_needs_a_human,
        model_settings=ModelSettings(max_tokens=48, seed=2),
        max_iterations=1,  # one model call: the test judges what it asked for, not what follows
        store=MemoryStore(),
        memory=None,
    )
    try:
        response = await agent.prompt(ASK, run_id="run-real-refund")
        status = response.status
    except RunError:  # max_iterations: the model's call got its (error) result, then the run stopped
        status = (await agent.state("run-real-refund")).status
    events = [e.data for e in await agent.store.load("run-real-refund")]
    [answer] = [e for e in events if isinstance(e, ModelCalled)]
    calls = answer.message.tool_calls
    if not calls:
        pytest.skip(f"the model wrote no tool call this time ({answer.stop_reason}); nothing to judge")
    [call] = calls
    assert isinstance(call.arguments, str)  # as the server sent it: JSON text, kept in the journal
    assert all(isinstance(arguments, dict) for arguments in judged)
    asked = [e for e in events if isinstance(e, ApprovalRequested)]
    if judged and judged[0].get("amount_usd", 0) > 100:
        assert status == "awaiting_approval" and refunded == []
        assert [a.arguments for a in asked] == judged
        [waiting] = (await agent.state("run-real-refund")).awaiting_approval()
        assert waiting.arguments == judged[0]
    elif not judged:  # a broken call: judged by no one, run by no one, and the model was told
        assert refunded == [] and asked == []
        assert not any(isinstance(e, ToolStarted) for e in events)
        [result] = [e for e in events if isinstance(e, ToolCompleted)]
        assert result.call_id == call.id and result.is_error
    else:  # a refund of $100 or less, allowed: it ran with the arguments the policy saw
        assert refunded == [(judged[0]["order"], judged[0]["amount_usd"])]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_max_tokens_8_is_journaled_as_max_tokens(model: Model, streaming: bool) -> None:
    """Invariant: an answer cut by `max_tokens=8` is `completed` with `stop_reason`
    `max_tokens`, on `model_called` and on the response."""
    agent = Agent(model, model_settings=ModelSettings(max_tokens=8), store=MemoryStore(), memory=None)
    ask = "Tell me a very long story about a dragon and a castle."
    if streaming:
        async for _ in agent.prompt_stream(ask, run_id="run-real-cut"):
            pass
        response = await agent.resume("run-real-cut")
    else:
        response = await agent.prompt(ask, run_id="run-real-cut")
    [answer] = [e.data for e in await agent.store.load("run-real-cut") if isinstance(e.data, ModelCalled)]
    assert answer.usage.output_tokens <= 8
    assert answer.stop_reason == "max_tokens"
    assert response.status == "completed" and response.stop_reason is StopReason.MAX_TOKENS
