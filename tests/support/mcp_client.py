"""The official MCP SDK's client to a real `eudaimon serve --mcp` (Streamable HTTP)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

KEY_META = "io.eudaimon/idempotency-key"
"""The `_meta` key that names a call's run (`eudaimon.mcp.IDEMPOTENCY_META_KEY`)."""


@asynccontextmanager
async def mcp_client(url: str, key: str | None = None) -> AsyncIterator[Client]:
    """A client of the MCP server at `url` (`…/mcp`), sending the API key `key` as a bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client
