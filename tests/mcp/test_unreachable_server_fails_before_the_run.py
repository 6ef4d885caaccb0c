"""A server that cannot be started or reached is a clear error naming it, raised before the
run starts (nothing is journaled), and no secret of its URL or headers is in it."""

from __future__ import annotations

import sys

import pytest

from eudaimon import Agent
from eudaimon.mcp import MCPConnectionError, MCPTools
from eudaimon.models import ScriptedModel
from support.ports import free_port


async def test_missing_command_names_the_command_and_journals_nothing() -> None:
    """Invariant: a stdio command that does not exist fails `prompt` before `run_started`."""
    agent = Agent(ScriptedModel(["never"]), tools=[MCPTools(command=["/nonexistent/mcp-server", "--flag"])])
    with pytest.raises(MCPConnectionError, match=r"/nonexistent/mcp-server --flag.*command was not found"):
        await agent.prompt("hi")
    assert await agent.store.list_runs() == []
    await agent.aclose()


async def test_server_that_exits_at_once_is_named() -> None:
    """Invariant: a command that starts and exits before the handshake is reported, naming it."""
    command = [sys.executable, "-c", "import sys; sys.exit(2)"]
    agent = Agent(ScriptedModel(["never"]), tools=[MCPTools(command=command)])
    with pytest.raises(MCPConnectionError, match=r"sys\.exit"):
        await agent.prompt("hi")
    await agent.aclose()


async def test_unreachable_url_is_named_without_its_secrets() -> None:
    """Invariant: nothing listening at the URL is reported with the URL, minus userinfo and
    query, and never the headers."""
    url = f"http://user:hunter2@127.0.0.1:{free_port()}/mcp?token=t0ken"
    agent = Agent(
        ScriptedModel(["never"]), tools=[MCPTools(url=url, headers={"Authorization": "Bearer s3cret"}, timeout_s=10)]
    )
    with pytest.raises(MCPConnectionError) as info:
        await agent.prompt("hi")
    message = str(info.value)
    assert "127.0.0.1" in message and "is the server running" in message
    assert not any(secret in message for secret in ("hunter2", "t0ken", "s3cret"))
    assert await agent.store.list_runs() == []
    await agent.aclose()
