"""Two `eudaimon serve --mcp` on one PostgreSQL journal are sent the same call, with the same
idempotency key, at the same moment (a client that retried on the other server): one run is
journaled, and both calls are answered with it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import mcp_types
from _server_support import KEYS, OPERATOR, Server

from support.databases import postgres_database
from support.mcp_client import KEY_META, mcp_client


async def _call(server: Server) -> mcp_types.CallToolResult:
    async with mcp_client(server.url + "/mcp", OPERATOR) as client:
        return await client.call_tool("ticker", {"input": "ticks=3"}, meta={KEY_META: "retried-on-another-server"})


async def test_the_same_key_on_two_servers_is_one_run(tmp_path: Path) -> None:
    with postgres_database("eudaimon_mcp_two") as url:
        env = {"EUDAIMON_API_KEYS": KEYS, "EUDAIMON_TEST_STEP_S": "0.2"}
        servers = [Server(tmp_path / f"s{n}.db", store=url, env=env, args=("--mcp",)) for n in (1, 2)]
        try:
            for server in servers:
                server.start()
            first, second = await asyncio.gather(*(_call(server) for server in servers))
            with servers[0].client(OPERATOR) as http:
                runs = http.get("/v1/runs", params={"agent": "ticker"}).json()["runs"]
        finally:
            for server in servers:
                server.stop()
    assert first.structured_content is not None and second.structured_content is not None
    assert first.structured_content["run_id"] == second.structured_content["run_id"]
    assert first.structured_content["status"] == second.structured_content["status"] == "completed"
    assert [r["run_id"] for r in runs] == [first.structured_content["run_id"]]
