"""A real `eudaimon serve --a2a --ag-ui` of `_holes_agents` (and `_server_agents:payer`) on a SQLite
file or a PostgreSQL database of its own; runs of the refunder paused at their approval; and the
journal read back, to check that a refused decision recorded nothing."""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from _a2a_support import A2AServer
from _backends_support import started_on

AGENTS = ("_holes_agents:refunder", "_holes_agents:prompted", "_server_agents:payer")


@dataclass
class HolesServer(A2AServer):
    agents: tuple[str, ...] = AGENTS
    args: tuple[str, ...] = ("--a2a", "--ag-ui")

    def command(self) -> list[str]:
        agents = [arg for target in self.agents for arg in ("--agent", target)]
        return [
            sys.executable, "-c", "from eudaimon.cli import app; app()", "serve",
            "--store", self.store_url, *agents, "--port", str(self.port), "--log-level", "warning", *self.args,
        ]  # fmt: skip


@contextlib.contextmanager
def holes_on(backend: str, where: Path, args: tuple[str, ...] = ("--a2a", "--ag-ui")) -> Iterator[HolesServer]:
    """A started server on `backend` (its PostgreSQL database dropped after it stops)."""
    with started_on(backend, where, lambda db, store: HolesServer(db, args=args, store=store), "eudaimon_holes") as s:
        yield s


def paused_refund(client: httpx2.Client, amount: float = 500) -> str:
    """A refunder run waiting for the approval of its `refund_1` (the model's `amount`)."""
    body = {"input": f"refund {amount:g}", "thread_id": f"holes-{uuid.uuid4().hex[:8]}"}
    run = client.post("/v1/agents/refunder/runs", params={"wait": "true"}, json=body).json()
    assert run["status"] == "awaiting_approval", run
    return str(run["run_id"])


def journal(client: httpx2.Client, run_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(f"/v1/runs/{run_id}/events").json()["events"]
    return events


def still_waiting(client: httpx2.Client, run_id: str, count: int) -> None:
    """Nothing was recorded: the journal has `count` events and the call still waits."""
    assert len(journal(client, run_id)) == count
    run = client.get(f"/v1/runs/{run_id}").json()
    assert run["status"] == "awaiting_approval" and run["decisions"] == [], run
