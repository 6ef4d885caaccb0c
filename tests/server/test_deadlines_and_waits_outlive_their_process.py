"""Deadlines and durable waits fire in whichever server is up, not in the one that asked: a real
`eudaimon serve` is killed with SIGKILL (or every server stopped) while a run waits, another is
started on the same store (a SQLite file, a PostgreSQL database), and it fires the deadline or
wakes the call, once, and drives the run on."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _backends_support import BACKENDS, started_on
from _server_support import Server, wait_until

ENV = {"EUDAIMON_TEST_APPROVAL_S": "3", "EUDAIMON_TEST_WAIT_S": "3"}


@dataclass
class TimedServer(Server):
    """`eudaimon serve` with the agents of `_timed_agents.py`."""

    def command(self) -> list[str]:
        command = super().command()
        first = command.index("--agent")
        del command[first : first + 6]  # _server_agents' three
        agents = ["--agent", "_timed_agents:slowpay", "--agent", "_timed_agents:napper"]
        return command[:first] + agents + command[first:]


def _events(server: Server, run_id: str) -> list[dict[str, Any]]:
    with server.client() as client:
        return list(client.get(f"/v1/runs/{run_id}/events").json()["events"])


def _run(server: Server, run_id: str) -> dict[str, Any]:
    with server.client() as client:
        return dict(client.get(f"/v1/runs/{run_id}").json())


@contextlib.contextmanager
def _timed(where: Path, backend: str) -> Iterator[TimedServer]:
    """A started `TimedServer` on `backend` (as `_backends_support.served_on`), stopped on exit."""
    with started_on(backend, where, lambda db, store: TimedServer(db, env=ENV, store=store), "eudaimon_time") as s:
        yield s


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_deadline_fires_after_kill_9_of_the_server_that_asked(tmp_path: Path, backend: str) -> None:
    """Invariant: the run is awaiting approval with its `deadline` in the API; its server dies
    (SIGKILL) before the deadline; a second server on the store journals `approval_timed_out`
    once, drives the run on (the model reads "no decision within 3s"), and refuses a late
    decision with 409 saying the deadline passed."""
    with _timed(tmp_path, backend) as first:
        with first.client() as client:
            started = client.post("/v1/agents/slowpay/runs?wait=true", json={"input": "pay ACME"}).json()
        run_id = started["run_id"]
        run = _run(first, run_id)
        assert run["status"] == "awaiting_approval"
        [pending] = run["pending_approvals"]
        assert pending["deadline"] and pending["on_timeout"] == "deny"
        first.kill()

        second = TimedServer(first.db, env=ENV, store=first.store)
        second.start()
        try:
            done = wait_until(
                lambda: (r := _run(second, run_id))["status"] == "completed" and r, "the run to go on", tries=400
            )
            types = [e["type"] for e in _events(second, run_id)]
            assert types.count("approval_timed_out") == 1 and "tool_started" not in types
            assert "no decision within 3s" in done["output"]
            [decision] = done["decisions"]
            assert (
                decision["timed_out"] and decision["by"] == "deadline" and decision["deadline"] == pending["deadline"]
            )
            with second.client() as client:
                late = client.post(f"/v1/runs/{run_id}/approvals/call_1", json={"approved": True})
            assert late.status_code == 409 and "deadline passed" in late.json()["detail"]
        finally:
            second.stop()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_retry_after_wakes_after_every_process_restarted(tmp_path: Path, backend: str) -> None:
    """Invariant: the call's tool raised `RetryAfter(3)`: the run is `waiting` with `wake_at`;
    every server stops; after the wake time a new one starts, journals `tool_woke`, and runs the
    call again (attempt 2, the same idempotency key) to completion."""
    with _timed(tmp_path, backend) as first:
        with first.client() as client:
            started = client.post("/v1/agents/napper/runs?wait=true", json={"input": "report"}).json()
        run_id = started["run_id"]
        run = _run(first, run_id)
        assert run["status"] == "waiting" and run["wake_at"]
        assert [w["call_id"] for w in run["waiting"]] == ["call_1"]
        first.stop()
        time.sleep(3.2)  # nothing is up when the call falls due

        second = TimedServer(first.db, env=ENV, store=first.store)
        second.start()
        try:
            done = wait_until(
                lambda: (r := _run(second, run_id))["status"] == "completed" and r, "the call to wake", tries=400
            )
            events = _events(second, run_id)
            starts = [e for e in events if e["type"] == "tool_started"]
            assert [e["type"] for e in events].count("tool_woke") == 1
            assert [s["attempt"] for s in starts] == [1, 2]
            assert starts[0]["idempotency_key"] == starts[1]["idempotency_key"]
            assert "attempt 2" in done["output"]
        finally:
            second.stop()
