"""Two workers on one queue and one store, many runs at once, one worker SIGKILLed midway: every
run completes once or waits for reconciliation, no WRITE runs twice, none is left `running`.

Two `eudaimon worker` processes serve one task queue and journal to one SQLite store. The test
starts `EUDAIMON_FLEET_KILL_RUNS` runs at once (default 40, sized for CI; the issue's figure is
500), each a READ then a WRITE (`charge`). When about half the WRITEs are in the ledger the tools
write (one line per execution, outside eudaimon), the worker that wrote the latest one is killed
with SIGKILL while the rest of the runs are in flight. The survivor finishes them: a READ the dead
worker was running is retried, a WRITE it was running becomes `tool_outcome_unknown` and its run
waits for reconciliation; nothing is run twice that may not be.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _fleet import running_workers
from fleet_agent import make

from eudaimon.temporal import TemporalEngine

RUNS = int(os.environ.get("EUDAIMON_FLEET_KILL_RUNS", "40"))
HEARTBEAT_TIMEOUT_S = 3.0


@pytest.fixture
def pair_of_workers(
    temporal_target: str, task_queue: str, store_url: str, ledger: Path, tmp_path: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    with running_workers(2, temporal_target, task_queue, store_url, tmp_path) as workers:
        yield workers


def ledger_lines(ledger: Path) -> list[dict[str, Any]]:
    if not ledger.exists():
        return []
    return [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]


async def test_kill9_of_one_of_two_workers_mid_flood_runs_no_write_twice_and_leaves_none_running(
    temporal_target: str,
    task_queue: str,
    store_url: str,
    ledger: Path,
    pair_of_workers: list[subprocess.Popen[bytes]],
) -> None:
    engine = TemporalEngine(temporal_target, task_queue=task_queue, heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S)
    agent = make(store=store_url, engine=engine)
    started = time.monotonic()
    prompts = [asyncio.ensure_future(agent.prompt("read then write")) for _ in range(RUNS)]

    deadline = time.monotonic() + 600
    while sum(line["tool"] == "charge" for line in ledger_lines(ledger)) < RUNS // 2:
        assert time.monotonic() < deadline, "half the WRITEs did not run within 600 s"
        assert not all(p.done() for p in prompts), "every run ended before half the WRITEs were seen"
        await asyncio.sleep(0.02)
    victim_pid = [line for line in ledger_lines(ledger) if line["tool"] == "charge"][-1]["pid"]
    [victim] = [w for w in pair_of_workers if w.pid == victim_pid]
    os.kill(victim_pid, signal.SIGKILL)
    victim.wait()
    in_flight = sum(not p.done() for p in prompts)
    killed_at = time.monotonic() - started

    responses = await asyncio.wait_for(asyncio.gather(*prompts), 1800)
    wall = time.monotonic() - started

    statuses = Counter(r.status for r in responses)
    writes = Counter(line["run"] for line in ledger_lines(ledger) if line["tool"] == "charge")
    print(
        f"\n{RUNS} runs, two workers; kill -9 of pid {victim_pid} at {killed_at:.1f} s with {in_flight} in flight;"
        f" all ended in {wall:.1f} s: { {str(s): n for s, n in statuses.items()} }; WRITE executions {sum(writes.values())},"
        f" duplicates {sum(n - 1 for n in writes.values() if n > 1)}; load average {os.getloadavg()}"
    )
    assert in_flight > 0, "the kill came after every run had ended: it tested nothing"
    assert {line["pid"] for line in ledger_lines(ledger)} == {w.pid for w in pair_of_workers}, "both workers ran"
    assert len({r.run_id for r in responses}) == RUNS
    assert set(statuses) <= {"completed", "awaiting_reconciliation"}, statuses
    assert all(n == 1 for n in writes.values()), {run: n for run, n in writes.items() if n > 1}

    for response in responses:
        state = await agent.state(response.run_id)  # the journal's fold: none is left `running`
        assert state.status == response.status, (response.run_id, state.status)
        events = await agent.store.load(response.run_id)
        assert [e.seq for e in events] == list(range(len(events)))
        types = [e.type for e in events]
        if response.status == "completed":
            assert types.count("run_completed") == 1
            assert writes[response.run_id] == 1
            assert response.text() == "done: value of a; charged 5"
        else:
            [unknown] = state.unknown_outcomes()
            assert unknown.name == "charge"
            assert writes[response.run_id] <= 1
            assert "run_completed" not in types
    summaries = await agent.store.list_runs(limit=RUNS + 10)
    assert {s.run_id for s in summaries} == {r.run_id for r in responses}, "the journal holds exactly these runs"
    await agent.aclose()
