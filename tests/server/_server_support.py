"""A real `eudaimon serve` in a subprocess on 127.0.0.1 (a free port), and an SSE reader.

The server is started the way a user starts it, through the CLI, with the agents of
`_server_agents.py`, on a SQLite file; `kill()` is SIGKILL (nothing flushed, no lease released).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from support.ports import free_port

CHROMIUM = os.environ.get("EUDAIMON_TEST_CHROMIUM", "/usr/bin/chromium")
"""Debian's chromium, which the browser tests drive (Playwright's own download is not used)."""
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
"""Without the background-networking flags, Chromium's calls out are refused by the closed network."""

HERE = Path(__file__).parent
AGENTS = ("payer", "ticker", "charger")
KEYS = "op-key-1:alice:operator,view-key-2:victor:viewer"
OPERATOR, VIEWER = "op-key-1", "view-key-2"


@dataclass
class Server:
    db: Path
    port: int = field(default_factory=free_port)
    env: Mapping[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    log: Path | None = None
    store: str | None = None
    """The store URL; by default the SQLite file `db`."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store_url(self) -> str:
        return self.store or f"sqlite:///{self.db}"

    def command(self) -> list[str]:
        agents = [arg for name in AGENTS for arg in ("--agent", f"_server_agents:{name}")]
        return [
            sys.executable, "-c", "from eudaimon.cli import app; app()", "serve",
            "--store", self.store_url, *agents, "--port", str(self.port), "--log-level", "warning", *self.args,
        ]  # fmt: skip

    def environment(self) -> dict[str, str]:
        """The server's environment: this directory's modules and this tree's `src` importable."""
        path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
        return {**os.environ, "EUDAIMON_LEASE_TTL_S": "2", "PYTHONPATH": path, **self.env}

    def start(self, *, wait: bool = True) -> Server:
        env = self.environment()
        self.log = self.log or self.db.with_suffix(f".{self.port}.log")
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command(), env=env, cwd=HERE, stdout=out, stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self) -> None:
        for _ in range(600):
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with {self.process.returncode}:\n{self.output()}")
            try:
                if httpx2.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"the server never answered /health:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log is not None and self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL: the process dies between two instructions, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def client(self, key: str | None = None) -> httpx2.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx2.Client(base_url=self.url, headers=headers, timeout=30)


@dataclass(frozen=True)
class Sse:
    event: str
    data: Any
    id: int | None


def read_sse(response: httpx2.Response) -> Iterator[Sse]:
    """The events of a streamed response, as they arrive."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in fields:
                ident = fields.get("id")
                yield Sse(fields.get("event", "message"), json.loads(fields["data"]), int(ident) if ident else None)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value


def wait_until(check: Any, what: str, *, tries: int = 600, pause_s: float = 0.05) -> Any:
    """Poll `check()` until it returns something truthy; fail naming `what` (a bound, not a timing)."""
    for _ in range(tries):
        value = check()
        if value:
            return value
        time.sleep(pause_s)
    raise AssertionError(f"gave up waiting for {what}")
