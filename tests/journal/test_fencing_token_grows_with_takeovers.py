"""`ToolContext.fencing_token` grows every time another driver takes the run over, on every backend.

A tool passes the token to a system that keeps the largest it has seen and refuses smaller
ones; that only works if a driver that takes a run over later always holds a larger token than
every driver before it that acted, whichever process or store it runs on.
"""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.models import ScriptedModel
from eudaimon.stores import EventStore


def _agent(store: EventStore, seen: list[tuple[str, int]]) -> Agent:
    @tool(effect="read")
    def look(ctx: ToolContext) -> str:
        """Read."""
        seen.append(("look", ctx.fencing_token))
        return "looked"

    @tool(effect="irreversible")
    def send(ctx: ToolContext) -> str:
        """Send (waits for approval)."""
        seen.append(("send", ctx.fencing_token))
        return "sent"

    model = ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCall("c1", "look", {}), ToolCall("c2", "send", {})]),
            Message.assistant(tool_calls=[ToolCall("c3", "send", {})]),
            "done",
        ]
    )
    return Agent(model, tools=[look, send], store=store)


async def test_each_takeover_hands_tools_a_larger_fencing_token(store: EventStore) -> None:
    """Invariant: the first driver's tools see token 0; each resume (a new driver taking the
    run over) hands its tools a token larger than any before it, and calls of one driver share
    one token — on memory, SQLite and PostgreSQL alike."""
    seen: list[tuple[str, int]] = []
    agent = _agent(store, seen)
    first = await agent.prompt("go")
    assert first.status == "awaiting_approval"
    await agent.approve(first.run_id, "c2", True, by="alice")
    second = await agent.resume(first.run_id)
    assert second.status == "awaiting_approval"
    await agent.approve(first.run_id, "c3", True, by="alice")
    assert (await agent.resume(first.run_id)).status == "completed"
    names = [name for name, _ in seen]
    tokens = [token for _, token in seen]
    assert names == ["look", "send", "send"]
    assert tokens[0] == 0
    assert tokens[0] < tokens[1] < tokens[2]


async def test_a_driver_that_finds_the_run_moved_on_holds_a_larger_token(store: EventStore) -> None:
    """Invariant: the token is read from the journal once the lease is taken, so a driver that
    loaded the run before another driver appended still ends up with a larger token."""
    seen: list[tuple[str, int]] = []
    agent = _agent(store, seen)
    first = await agent.prompt("go")
    stale: Any = await runtime_of(agent).reopen(first.run_id)  # loaded now, driven later
    await agent.approve(first.run_id, "c2", True, by="alice")
    await agent.resume(first.run_id)
    await agent.approve(first.run_id, "c3", True, by="alice")
    await runtime_of(agent).run(stale, None)  # catches up with the journal after taking the lease
    assert stale.state.status == "completed"
    tokens = [token for _, token in seen]
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens) == 3
