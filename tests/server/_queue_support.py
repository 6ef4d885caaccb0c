"""A real `eudaimon serve` of `_queue_agents.py`, on a SQLite file or a PostgreSQL schema of its
own, with a gate file its `gated` agent waits for and a log of what the models did."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from _server_support import Server, wait_until

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
BACKENDS = [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]


@dataclass
class Backend:
    """Where the journal is: a SQLite file, or a PostgreSQL schema dropped afterwards."""

    kind: str
    tmp: Path
    schema: str = field(default_factory=lambda: f"eudaimon_test_{uuid.uuid4().hex}")

    @property
    def store_url(self) -> str:
        return f"sqlite:///{self.tmp / 'runs.db'}" if self.kind == "sqlite" else PG_DSN

    def env(self) -> dict[str, str]:
        return {"QUEUE_TEST_PG_SCHEMA": self.schema} if self.kind == "postgres" else {}

    def drop(self) -> None:
        if self.kind == "postgres":
            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


@dataclass
class QueueServer(Server):
    backend: Backend | None = None
    agents: tuple[str, ...] = ("gated", "quick")

    @property
    def gate(self) -> Path:
        return self.db.parent / "gate"

    @property
    def model_log(self) -> Path:
        return self.db.parent / "models.log"

    def command(self) -> list[str]:
        assert self.backend is not None
        agents = [arg for name in self.agents for arg in ("--agent", f"_queue_agents:{name}")]
        return [
            sys.executable, "-c", "from eudaimon.cli import app; app()", "serve",
            "--store", self.backend.store_url, *agents, "--port", str(self.port), "--log-level", "warning", *self.args,
        ]  # fmt: skip

    def start(self, *, wait: bool = True) -> QueueServer:
        assert self.backend is not None
        self.env = {
            **self.env,
            **self.backend.env(),
            "QUEUE_TEST_GATE": str(self.gate),
            "QUEUE_TEST_LOG": str(self.model_log),
        }
        super().start(wait=wait)
        return self

    def again(self) -> QueueServer:
        """A new server process on the same journal, gate and log (a restart)."""
        return QueueServer(self.db, env=self.env, args=self.args, backend=self.backend, agents=self.agents).start()

    def open_gate(self) -> None:
        self.gate.touch()

    def model_lines(self) -> list[str]:
        return self.model_log.read_text().splitlines() if self.model_log.exists() else []


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    made = Backend(request.param, tmp_path)
    yield made
    made.drop()


def begun(server: QueueServer, *inputs: str) -> list[str]:
    """Wait until the model has begun a run for each of `inputs`; the log's lines then."""

    def check() -> list[str] | None:
        lines = server.model_lines()
        return lines if all(f"begin {i}" in lines for i in inputs) else None

    found: list[str] = wait_until(check, f"the model to begin {inputs}")
    return found


def run_of(client: httpx2.Client, run_id: str) -> dict[str, Any]:
    answer = client.get(f"/v1/runs/{run_id}")
    assert answer.status_code == 200, f"run {run_id}: {answer.status_code} {answer.text}"
    found: dict[str, Any] = answer.json()
    return found


def all_completed(client: httpx2.Client, run_ids: list[str]) -> list[dict[str, Any]]:
    """Wait until every run completed, reading each every time: none may ever be missing."""

    def check() -> list[dict[str, Any]] | None:
        runs = [run_of(client, r) for r in run_ids]
        return runs if all(r["status"] == "completed" for r in runs) else None

    done: list[dict[str, Any]] = wait_until(check, f"runs {run_ids} to complete", tries=1200)
    return done
