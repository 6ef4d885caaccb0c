"""Helpers for the MCP tests: the SDK-built `annotated_server.py` over stdio and over
Streamable HTTP (uvicorn on a free port), and what it logged."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).with_name("annotated_server.py"))


def stdio_command() -> list[str]:
    return [sys.executable, SERVER, "stdio"]


def read_calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_for(predicate: Any, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class HttpServer:
    """`annotated_server.py http PORT` under uvicorn; `restart()` brings up a new process on the same port."""

    port: int
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, SERVER, "http", str(self.port)], env=self.env)

        def up() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                assert self.process is not None and self.process.poll() is None, "the HTTP MCP server exited"
                return False
            return True

        wait_for(up, "the HTTP MCP server to listen")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
