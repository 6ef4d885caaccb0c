"""An approval policy or a hook that raises never lets its call run.

A policy's bug is not a decision: its call waits for a human, the approval's reason naming the
policy's error (the run is not failed, the model is not told anything it could act on). A hook
`on_tool_call` that raises fails the run before any call of the batch has started.
"""

from __future__ import annotations

from typing import Any

import pytest

from eudaimon import Agent, Tool, ToolCall, ToolPolicy, tool
from eudaimon.core.events import ApprovalRequested, ToolStarted
from eudaimon.errors import RunError
from eudaimon.hooks import AgentHook
from eudaimon.stores import MemoryStore
from support.agents import calls_once


def _refunds(ran: list[float], **options: Any) -> Agent:
    @tool(effect="write", idempotent=True)
    def refund(amount_usd: float) -> str:
        """Refund."""
        ran.append(amount_usd)
        return "refunded"

    return calls_once(refund, '{"amount_usd": 550}', store=MemoryStore(), **options)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_policy_that_raises_sends_its_call_to_a_human(asynchronous: bool) -> None:
    """Invariant: the call does not run; the run waits for approval, the reason naming the
    policy's error; once a human approves, it runs."""
    ran: list[float] = []

    def broken(call: ToolCall, tool: Tool) -> ToolPolicy:
        raise KeyError("amount")

    async def broken_async(call: ToolCall, tool: Tool) -> ToolPolicy:
        raise KeyError("amount")

    agent = _refunds(ran, approval_policy=broken_async if asynchronous else broken)
    paused = await agent.prompt("refund")

    assert paused.status == "awaiting_approval" and ran == []
    events = await agent.store.load(paused.run_id)
    [asked] = [e.data for e in events if isinstance(e.data, ApprovalRequested)]
    assert "approval policy raised KeyError" in asked.reason
    assert not any(isinstance(e.data, ToolStarted) for e in events)
    await agent.approve(paused.run_id, "c1", by="alice")
    assert (await agent.resume(paused.run_id)).status == "completed" and ran == [550]


async def test_a_policy_answering_nonsense_sends_its_call_to_a_human() -> None:
    """Invariant: a verdict that is not a `ToolPolicy` is no permission either."""
    ran: list[float] = []
    agent = _refunds(ran, approval_policy=lambda call, tool: "sure")
    paused = await agent.prompt("refund")
    assert paused.status == "awaiting_approval" and ran == []


async def test_a_hook_that_raises_fails_the_run_before_its_call_starts() -> None:
    """Invariant: a hook `on_tool_call` that raises fails the run; no intent is journaled and
    the tool never runs."""
    ran: list[float] = []

    class Refuse(AgentHook):
        def on_tool_call(self, call: ToolCall) -> None:
            raise RuntimeError("audit log unavailable")

    agent = _refunds(ran, hooks=[Refuse()])
    with pytest.raises(RunError):
        await agent.prompt("refund", run_id="run-hook")
    assert ran == []
    events = await agent.store.load("run-hook")
    assert not any(isinstance(e.data, ToolStarted) for e in events)
    assert events[-1].type == "run_failed"
