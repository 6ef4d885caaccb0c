"""The tool list a run used is journaled: resumed later, after the server changed, the run
offers and classifies the same tools; a tool that disappeared is an error result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_support import read_calls, stdio_command

from eudaimon import Agent, Tool
from eudaimon.core.messages import Message, ToolCall
from eudaimon.mcp import MCPTools
from eudaimon.models import ScriptedModel


def _server(env: dict[str, str], variant: str) -> MCPTools:
    return MCPTools(command=stdio_command(), env={**env, "SERVER_VARIANT": variant}, trusted=True, name="kv")


async def test_resume_after_server_upgrade_uses_the_journaled_tools(
    tmp_path: Path, server_env: dict[str, str], call_log: Path
) -> None:
    """Invariant: a run started against v1 and resumed against v2 keeps v1's tools and effect
    classes; the tool v2 dropped answers the model with an error, and is never sent."""
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    first = ScriptedModel([Message.assistant(None, [ToolCall("c1", "delete_all", {})])])
    async with Agent(first, tools=[_server(server_env, "v1")], store=store) as agent:
        paused = await agent.prompt("clean up")
        journaled = {r.name: r.effect for r in (await agent.state(paused.run_id)).tools}
    assert paused.status == "awaiting_approval"
    assert journaled["lookup"] == "read" and "append_note" in journaled

    seen: list[tuple[str, str]] = []

    def policy(call: ToolCall, tool: Tool) -> Any:
        seen.append((tool.name, tool.effect.value))
        return "allow"

    second = ScriptedModel(
        [
            Message.assistant(
                None, [ToolCall("c2", "append_note", {"text": "x"}), ToolCall("c3", "lookup", {"key": "k"})]
            ),
            "done",
        ]
    )
    async with Agent(second, tools=[_server(server_env, "v2")], store=store, approval_policy=policy) as later:
        await later.approve(paused.run_id, "c1")
        response = await later.resume(paused.run_id)
    assert response.status == "completed"
    assert "append_note" in {s.name for s in second.requests[0].tools}
    assert ("lookup", "read") in seen  # v2 dropped the read-only hint; the run keeps what it journaled
    results = {m.tool_call_id: m for m in second.requests[1].messages if m.role == "tool"}
    assert results["c2"].is_error and "no longer offered" in results["c2"].content
    assert not results["c3"].is_error
    assert [c["tool"] for c in read_calls(call_log)] == ["delete_all", "lookup"]


async def test_a_new_run_lists_the_server_anew(server_env: dict[str, str]) -> None:
    """Invariant: only runs already started keep their list; a new run sees the server as it is now."""
    model = ScriptedModel(["hi"])
    async with Agent(model, tools=[_server(server_env, "v2")]) as agent:
        response = await agent.prompt("hello")
        assert "append_note" not in {r.name for r in (await agent.state(response.run_id)).tools}
    assert "append_note" not in {s.name for s in model.requests[0].tools}
