"""Fixtures for the MCP tests: a call log and the HTTP server (see `mcp_support`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_support import HttpServer

from support.ports import free_port


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


@pytest.fixture
def server_env(call_log: Path) -> dict[str, str]:
    return {"CALL_LOG": str(call_log)}


@pytest.fixture
def http_server(server_env: dict[str, str]) -> Iterator[HttpServer]:
    server = HttpServer(free_port(), {**os.environ, **server_env})
    server.start()
    try:
        yield server
    finally:
        server.stop()
