"""The annotations of an agent served over MCP (`eudaimon.mcp._served.agent_tool`) never say it
is safer than what is known of its tools: a caller that trusts them (`MCPTools(trusted=True)`)
re-sends a read-only call, and skips its own human for a call that is not destructive."""

from __future__ import annotations

import sys

from eudaimon import Agent, tool
from eudaimon.mcp import MCPTools
from eudaimon.mcp._served import agent_tool
from eudaimon.models import ScriptedModel


@tool(effect="read")
def lookup(key: str) -> str:
    """Read a value."""
    return key


@tool(effect="irreversible")
def wire(amount_usd: float) -> str:
    """Send money."""
    return "sent"


def _hints(*tools: object) -> tuple[bool | None, bool | None]:
    served = agent_tool(Agent(ScriptedModel(["ok"]), tools=list(tools), memory=None))
    assert served.annotations is not None
    return served.annotations.read_only_hint, served.annotations.destructive_hint


def test_read_only_only_when_every_tool_reads_and_destructive_when_one_is_irreversible() -> None:
    assert _hints() == (True, False)
    assert _hints(lookup) == (True, False)
    assert _hints(lookup, wire) == (False, True)


def test_an_agent_with_a_toolset_is_neither_read_only_nor_harmless() -> None:
    """Invariant: a toolset's tools are listed only when a run starts (an MCP server's may change
    any day), so the served agent cannot promise what they do."""
    remote = MCPTools(command=[sys.executable, "-m", "mcp_server_time"])  # not reached: nothing listed yet
    assert _hints(lookup, remote) == (False, True)
