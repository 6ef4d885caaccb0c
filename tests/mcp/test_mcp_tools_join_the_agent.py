"""MCP servers' tools join an agent's tools: schemas reach the model, calls reach the server
with the call's idempotency key in `_meta`, results and errors reach the model."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_support import HttpServer, read_calls, stdio_command

from eudaimon import Agent
from eudaimon.core.digest import idempotency_key
from eudaimon.core.messages import Message, ToolCall
from eudaimon.mcp import IDEMPOTENCY_META_KEY, MCPTools
from eudaimon.models import ScriptedModel


def _calls(*calls: ToolCall) -> Message:
    return Message.assistant(None, list(calls))


async def test_stdio_tools_are_offered_with_their_schemas(server_env: dict[str, str]) -> None:
    """Invariant: the model is offered the server's tools under their names, with their JSON Schemas."""
    model = ScriptedModel(["hi"])
    async with Agent(model, tools=[MCPTools(command=stdio_command(), env=server_env)]) as agent:
        await agent.prompt("hello")
    specs = {s.name: s for s in model.requests[0].tools}
    assert {"lookup", "set_value", "append_note", "delete_all"} <= set(specs)
    assert specs["set_value"].parameters["required"] == ["key", "value"]
    assert specs["lookup"].description == "Read a value by key."


async def test_a_call_carries_its_idempotency_key_in_meta(server_env: dict[str, str], call_log: Path) -> None:
    """Invariant: a tools/call request carries the call's idempotency key in `_meta`, and the
    server's answer is the tool result the model sees."""
    model = ScriptedModel([_calls(ToolCall("c1", "append_note", {"text": "x"})), "done"])
    async with Agent(model, tools=[MCPTools(command=stdio_command(), env=server_env)]) as agent:
        response = await agent.prompt("note it")
    assert response.status == "completed"
    [call] = read_calls(call_log)
    assert call["meta"][IDEMPOTENCY_META_KEY] == idempotency_key(response.run_id, "c1")
    tool_message = model.requests[1].messages[-1]
    assert (tool_message.content, tool_message.is_error) == ("noted: x", False)


async def test_server_errors_and_bad_arguments_are_results_the_model_sees(server_env: dict[str, str]) -> None:
    """Invariant: a tool that fails on the server, and arguments that miss its schema, become
    error results; the run goes on."""
    model = ScriptedModel([_calls(ToolCall("c1", "fail", {}), ToolCall("c2", "set_value", {"key": 1})), "recovered"])
    async with Agent(model, tools=[MCPTools(command=stdio_command(), env=server_env)]) as agent:
        response = await agent.prompt("try")
    assert response.final_text == "recovered"
    results = {m.tool_call_id: m for m in model.requests[1].messages if m.role == "tool"}
    assert results["c1"].is_error and "fail" in results["c1"].content
    assert results["c2"].is_error and "schema" in results["c2"].content


async def test_prefix_renames_tools_and_calls_reach_the_original(server_env: dict[str, str], call_log: Path) -> None:
    """Invariant: with `prefix=`, the model sees `{prefix}_{name}` and the server is called by its own name."""
    model = ScriptedModel([_calls(ToolCall("c1", "kv_lookup", {"key": "k"})), "ok"])
    async with Agent(model, tools=[MCPTools(command=stdio_command(), env=server_env, prefix="kv")]) as agent:
        await agent.prompt("read")
    assert "kv_lookup" in {s.name for s in model.requests[0].tools}
    assert [c["tool"] for c in read_calls(call_log)] == ["lookup"]


async def test_streamable_http_with_headers(http_server: HttpServer, call_log: Path) -> None:
    """Invariant: a Streamable HTTP server is reached at its URL, with the headers given on every request."""
    model = ScriptedModel([_calls(ToolCall("c1", "set_value", {"key": "a", "value": "1"})), "set"])
    tools = MCPTools(url=http_server.url, headers={"Authorization": "Bearer s3cret"}, trusted=True)
    async with Agent(model, tools=[tools]) as agent:
        response = await agent.prompt("set it")
    assert response.final_text == "set"
    [call] = read_calls(call_log)
    assert (call["tool"], call["authorization"]) == ("set_value", "Bearer s3cret")
    events = await agent.store.load(response.run_id)
    assert "s3cret" not in repr(events)


async def test_reference_time_server_from_pypi() -> None:
    """Invariant: the reference server `mcp-server-time`, which no one here wrote, works as a toolset."""
    command = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    model = ScriptedModel([_calls(ToolCall("c1", "get_current_time", {"timezone": "Europe/Paris"})), "it is late"])
    async with Agent(model, tools=[MCPTools(command=command)]) as agent:
        response = await agent.prompt("what time is it in Paris?")
    assert response.final_text == "it is late"
    assert {"get_current_time", "convert_time"} <= {s.name for s in model.requests[0].tools}
    result = model.requests[1].messages[-1]
    assert not result.is_error and "Europe/Paris" in result.content


async def test_an_older_server_is_reached_through_the_initialize_handshake() -> None:
    """Invariant: a server of the 2025-06-18 revision (no `server/discover`) is reached by
    falling back to the initialize handshake, and its tools work like any other."""
    legacy = str(Path(__file__).with_name("legacy_server.py"))
    model = ScriptedModel([_calls(ToolCall("c1", "shout", {"text": "hi"})), "done"])
    tools = MCPTools(command=[sys.executable, legacy], trusted=True)
    async with Agent(model, tools=[tools]) as agent:
        response = await agent.prompt("shout")
        records = (await agent.state(response.run_id)).tools
    assert [(r.name, r.effect) for r in records] == [("shout", "read")]
    assert model.requests[1].messages[-1].content == "HI"
