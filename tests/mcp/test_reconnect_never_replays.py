"""A server that restarts or drops the connection is reconnected; a call whose outcome is
unknown is never sent again: the run waits for reconciliation instead."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from mcp_support import HttpServer, read_calls, stdio_command, wait_for

from eudaimon import Agent
from eudaimon.core.messages import Message, ToolCall
from eudaimon.mcp import MCPTools
from eudaimon.models import ScriptedModel


def _calls(*calls: ToolCall) -> Message:
    return Message.assistant(None, list(calls))


async def test_write_in_flight_when_the_server_dies_is_not_replayed(server_env: dict[str, str], call_log: Path) -> None:
    """Invariant: a WRITE whose server died mid-call is `tool_outcome_unknown` (the run waits),
    not an error the model might retry and not a re-send; after reconciliation the next call
    reconnects to a fresh server."""
    model = ScriptedModel(
        [_calls(ToolCall("c1", "slow_write", {"text": "x", "seconds": 60})), _calls(ToolCall("c2", "pid", {})), "done"]
    )
    tools = MCPTools(command=stdio_command(), env=server_env, trusted=True)
    async with Agent(model, tools=[tools]) as agent:
        running = asyncio.ensure_future(agent.prompt("write"))
        await asyncio.to_thread(wait_for, lambda: read_calls(call_log), "the write to begin")
        first_pid = read_calls(call_log)[0]["pid"]
        os.kill(first_pid, signal.SIGKILL)
        paused = await running
        assert paused.status == "awaiting_reconciliation"
        assert [c.id for c in (await agent.state(paused.run_id)).unknown_outcomes()] == ["c1"]
        await agent.reconcile(paused.run_id, "c1", output="wrote x")
        response = await agent.resume(paused.run_id)
    assert response.status == "completed"
    assert [c.get("phase") for c in read_calls(call_log) if c["tool"] == "slow_write"] == ["begin"]
    second_pid = int(model.requests[2].messages[-1].content)
    assert second_pid != first_pid
    assert tools.connection.connects == 2


async def test_a_read_is_resent_once_on_a_new_connection(server_env: dict[str, str], call_log: Path) -> None:
    """Invariant: a READ that lost its connection is sent once more after reconnecting (same
    idempotency key); failing again, it is an error result and the run goes on. Closing the
    agent closes every connection it let go too: none is still winding its server down."""
    model = ScriptedModel([_calls(ToolCall("c1", "exit_server", {})), "gave up"])
    async with Agent(model, tools=[MCPTools(command=stdio_command(), env=server_env, trusted=True)]) as agent:
        response = await agent.prompt("try")
    assert [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("mcp ") and not t.done()] == []
    assert response.final_text == "gave up"
    sent = [c for c in read_calls(call_log) if c["tool"] == "exit_server"]
    assert len(sent) == 2 and sent[0]["meta"] == sent[1]["meta"]
    result = model.requests[1].messages[-1]
    assert result.is_error and "connection" in result.content


async def test_http_server_restart_is_reconnected(http_server: HttpServer) -> None:
    """Invariant: a Streamable HTTP server restarted between calls is simply reached again."""
    pids: list[str] = []

    model = ScriptedModel([_calls(ToolCall("c1", "pid", {})), _calls(ToolCall("c2", "pid", {})), "ok"])
    tools = MCPTools(url=http_server.url, trusted=True)

    class Restart:
        async def on_tool_result(self, call: ToolCall, output: object) -> None:
            pids.append(getattr(output, "content", ""))
            if call.id == "c1":
                await asyncio.to_thread(http_server.restart)

    async with Agent(model, tools=[tools], hooks=Restart()) as agent:
        response = await agent.prompt("which process?")
    assert response.status == "completed"
    assert len(pids) == 2 and pids[0] != pids[1] and all(p.isdigit() for p in pids)
