"""A worker SIGKILLed inside a tool, with a second worker running: no call that may not run
twice runs twice, and the run goes on.

Two `eudaimon worker` processes serve the queue. A tool call is held inside its tool (a gate
file) until the worker executing it has been killed with SIGKILL. A READ call (a local
activity) is then run again with the same idempotency key by the other worker, which takes
over the workflow task once Temporal has timed it out, and the run completes; a WRITE
call is never retried: it becomes `tool_outcome_unknown`, the run waits for reconciliation,
and `eudaimon runs reconcile` from another process finishes it. The ledger the tools write
shows what really ran; the store's journal is gap-free throughout.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _fleet import HERE, running_workers
from fleet_agent import make

from eudaimon.temporal import TemporalEngine

HEARTBEAT_TIMEOUT_S = 3.0


@pytest.fixture
def two_workers(
    temporal_target: str, task_queue: str, store_url: str, ledger: Path, tmp_path: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    with running_workers(2, temporal_target, task_queue, store_url, tmp_path) as workers:
        yield workers


def executions(ledger: Path, tool: str) -> list[dict[str, Any]]:
    if not ledger.exists():
        return []
    lines = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    return [line for line in lines if line["tool"] == tool]


async def wait_for(predicate: Any, what: str, timeout_s: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def kill_executor(workers: list[subprocess.Popen[bytes]], pid: int) -> subprocess.Popen[bytes]:
    [victim] = [w for w in workers if w.pid == pid]
    os.kill(pid, signal.SIGKILL)
    victim.wait()
    return victim


def engine(target: str, queue: str) -> TemporalEngine:
    return TemporalEngine(target, task_queue=queue, heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S)


async def test_read_call_reruns_with_same_key_on_the_other_worker(
    temporal_target: str, task_queue: str, store_url: str, ledger: Path, two_workers: list[subprocess.Popen[bytes]]
) -> None:
    """READ: killed mid-call, it runs again on the surviving worker with the same key, once
    more only; the WRITE after it runs once; the run completes with a gap-free journal."""
    gate = Path(os.environ["FLEET_GATES"]) / "gate-read"
    gate.touch()
    agent = make(store=store_url, engine=engine(temporal_target, task_queue))
    prompt = asyncio.ensure_future(agent.prompt("hold lookup"))
    [first] = await wait_for(lambda: executions(ledger, "lookup"), "the lookup to start")
    kill_executor(two_workers, first["pid"])
    await wait_for(lambda: len(executions(ledger, "lookup")) == 2, "the lookup to run again elsewhere")
    gate.unlink()
    response = await asyncio.wait_for(prompt, 180)

    assert response.status == "completed"
    lookups = executions(ledger, "lookup")
    assert len(lookups) == 2
    assert {e["key"] for e in lookups} == {first["key"]}
    assert {e["attempt"] for e in lookups} == {1}
    assert lookups[1]["pid"] != first["pid"]
    assert len(executions(ledger, "charge")) == 1
    events = await agent.store.load(response.run_id)
    assert [e.seq for e in events] == list(range(len(events)))
    assert [e.type for e in events].count("tool_started") == 2  # Temporal's retry is not a new attempt
    await agent.aclose()


async def test_write_call_is_never_rerun_and_waits_for_reconciliation(
    temporal_target: str, task_queue: str, store_url: str, ledger: Path, two_workers: list[subprocess.Popen[bytes]]
) -> None:
    """WRITE: killed mid-call, it is not retried; the run records `tool_outcome_unknown` and
    waits; a reconciliation from the CLI completes it; the WRITE ran exactly once."""
    gate = Path(os.environ["FLEET_GATES"]) / "gate-write"
    gate.touch()
    agent = make(store=store_url, engine=engine(temporal_target, task_queue))
    prompt = asyncio.ensure_future(agent.prompt("hold charge"))
    [first] = await wait_for(lambda: executions(ledger, "charge"), "the charge to start")
    kill_executor(two_workers, first["pid"])
    waiting = await asyncio.wait_for(prompt, 180)
    gate.unlink()

    assert waiting.status == "awaiting_reconciliation"
    state = await agent.state(waiting.run_id)
    [unknown] = state.unknown_outcomes()
    assert unknown.name == "charge"
    reconciled = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "eudaimon",
            "runs",
            "reconcile",
            waiting.run_id,
            unknown.id,
            "--output",
            "charged 9 (checked by ops)",
            "--store",
            store_url,
        ],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    done = await agent.resume(waiting.run_id)
    assert done.status == "completed"
    assert done.text() == "done: value of b; charged 9 (checked by ops)"

    assert len(executions(ledger, "charge")) == 1
    assert len(executions(ledger, "lookup")) == 1
    events = await agent.store.load(waiting.run_id)
    assert [e.seq for e in events] == list(range(len(events)))
    types = [e.type for e in events]
    assert types.count("tool_outcome_unknown") == 1
    assert types.count("tool_reconciled") == 1
    await agent.aclose()
