"""An agent that declares `deps_type` cannot be started from outside (deps are never journaled,
and a caller over MCP has none to give): its call over MCP is an error result that says so, and
nothing is journaled. Served in-process (`create_app(mcp=True)` under a real uvicorn)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mcp_types

from eudaimon import Agent
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app
from eudaimon.stores.sqlite import SqliteStore
from support.asgi import served
from support.mcp_client import mcp_client


@dataclass
class Bank:
    account: str


async def test_a_call_to_an_agent_with_deps_is_refused_and_starts_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(ScriptedModel(["ok"]), name="teller", deps_type=Bank, store=store, memory=None)
    async with served(create_app(agent, mcp=True)) as url, mcp_client(url + "/mcp") as client:
        result = await client.call_tool("teller", {"input": "balance?"})
    [said] = [b.text for b in result.content if isinstance(b, mcp_types.TextContent)]
    assert result.is_error and "deps_type=Bank" in said and "nothing was started" in said
    assert await store.list_runs(limit=10) == []
