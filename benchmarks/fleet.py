"""A fleet on Temporal: N runs started at once through one worker, eudaimon and Pydantic AI side by side.

Each run calls the model twice (50 ms each) and one READ tool (`peers/fleet_loop.py`). One
Temporal dev server; for each framework and N, a worker in a process of its own (eudaimon's
with a SQLite journal), N runs started at once from this process. Figures per framework and N:
runs completed (within the time allowed), wall seconds from the first start to the last
answer, the worker's CPU seconds and peak RSS, the Temporal server's CPU seconds, and per run
the activities, history events (the median and the most), workflow tasks (and how many timed
out or failed: what makes a history grow under load) and history bytes per model call (from
a few runs' histories).

Sizes: N = 10 (quick), 10 and 100 (full); `FLEET_SIZES=10,100,1000` for the issue's targets
(1,000 is not run on a shared 2-core machine by default).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import _harness as h
from temporal_step import start_server

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_worker(kind: str, target: str, queue: str, store_url: str, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "peers.fleet_loop", kind, target, queue]
    if kind == "eudaimon":
        command.append(store_url)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(h.SRC), str(h.HERE)])}
    with open(log, "wb") as out:
        worker = subprocess.Popen(command, cwd=h.HERE, stdout=out, stderr=subprocess.STDOUT, env=env)
    for _ in range(600):
        if b"ready" in log.read_bytes():
            time.sleep(1.0)  # polling
            return worker
        if worker.poll() is not None:
            raise RuntimeError(f"the {kind} worker exited: {log.read_text()[-2000:]}")
        time.sleep(0.1)
    raise RuntimeError(f"the {kind} worker did not start")


async def run_eudaimon(
    target: str, queue: str, store_url: str, n: int, allowed_s: float
) -> tuple[int, float, list[str]]:
    """N runs started at once through whatever workers serve `queue`: how many answered within
    `allowed_s`, the wall time, their ids (the two-worker workload starts its runs so too)."""
    from peers import fleet_loop

    from eudaimon.temporal import TemporalEngine

    agent = fleet_loop.make(store=store_url, engine=TemporalEngine(target, task_queue=queue))
    ids = [f"fleet-{uuid.uuid4().hex[:12]}" for _ in range(n)]

    async def one(run_id: str) -> bool:
        response = await agent.prompt("go", run_id=run_id)
        return response.text() == "looked it up"

    started = time.perf_counter()
    done = await _within([one(i) for i in ids], allowed_s)
    wall = time.perf_counter() - started
    await agent.aclose()
    return done, wall, ids


async def run_pydantic_ai(target: str, queue: str, n: int, allowed_s: float) -> tuple[int, float, list[str]]:
    from peers import fleet_pai
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
    from temporalio.client import Client

    client = await Client.connect(target, plugins=[PydanticAIPlugin()])
    ids = [f"pai-{uuid.uuid4().hex[:12]}" for _ in range(n)]

    async def one(run_id: str) -> bool:
        output = await client.execute_workflow(fleet_pai.PydanticAIFleet.run, "go", id=run_id, task_queue=queue)
        return output == "looked it up"

    started = time.perf_counter()
    done = await _within([one(i) for i in ids], allowed_s)
    return done, time.perf_counter() - started, ids


async def _within(calls: list[Any], allowed_s: float) -> int:
    tasks = [asyncio.ensure_future(c) for c in calls]
    finished, pending = await asyncio.wait(tasks, timeout=allowed_s)
    for task in pending:
        task.cancel()
    return sum(1 for t in finished if not t.exception() and t.result())


async def history_figures(target: str, ids: list[str]) -> dict[str, float]:
    """Per run, from up to 10 runs' histories: activities, events, workflow tasks (those lost
    to a timeout or a failure apart), bytes per model call."""
    from temporalio.api.enums.v1 import EventType
    from temporalio.client import Client

    client = await Client.connect(target)
    activities, events, per_call, tasks, lost = [], [], [], [], []
    for run_id in ids[:: max(1, len(ids) // 10)][:10]:  # ten, spread over the starts
        history = await client.get_workflow_handle(run_id).fetch_history()
        scheduled = [
            e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events
            if e.HasField("activity_task_scheduled_event_attributes")
        ]
        activities.append(len(scheduled))
        events.append(len(history.events))
        payload = sum(e.ByteSize() for e in history.events)
        per_call.append(payload / 2)  # two model calls per run
        kinds = [e.event_type for e in history.events]
        tasks.append(kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED))
        # Why a history grows under load: a workflow task that timed out or failed is done again.
        lost.append(
            kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
            + kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
        )
    return {
        "activities per run": h.median(activities),
        "history events per run": h.median(events),
        "history events per run, most": max(events),
        "workflow tasks per run": h.median(tasks),
        "workflow tasks timed out or failed per run": h.median(lost),
        "history bytes per model call": h.median(per_call),
    }


def one_size(kind: str, target: str, server_pid: int, n: int, tmp: Path) -> dict[str, float]:
    queue = f"fleet-{kind}-{uuid.uuid4().hex[:6]}"
    store_url = f"sqlite:///{tmp / f'{queue}.db'}"
    worker = start_worker(kind, target, queue, store_url, tmp / f"{queue}.log")
    allowed_s = max(120.0, n * 1.0)
    try:
        cpu0, server0 = cpu_s(worker.pid), cpu_s(server_pid)
        if kind == "eudaimon":
            done, wall, ids = h.run_on_thread(lambda: run_eudaimon(target, queue, store_url, n, allowed_s))
        else:
            done, wall, ids = h.run_on_thread(lambda: run_pydantic_ai(target, queue, n, allowed_s))
        figures = {
            "completed": float(done),
            "wall s": wall,
            "worker CPU s": cpu_s(worker.pid) - cpu0,
            "worker peak RSS MB": peak_rss_mb(worker.pid),
            "server CPU s": cpu_s(server_pid) - server0,
        }
        figures |= h.run_on_thread(lambda: history_figures(target, ids))
        return figures
    finally:
        h.stop(worker, 30)


def measure(quick: bool) -> dict[str, Any]:
    h.requires("temporalio")
    from peers import fleet_pai

    sizes = [int(s) for s in os.environ.get("FLEET_SIZES", "10" if quick else "10,100").split(",")]
    kinds = ["eudaimon"] + (["pydantic-ai"] if fleet_pai.PYDANTIC_AI_ERROR is None else [])
    server, target = start_server()
    figures: dict[str, Any] = {}
    if fleet_pai.PYDANTIC_AI_ERROR is not None:
        figures["pydantic-ai"] = f"not measured: {fleet_pai.PYDANTIC_AI_ERROR}"
    try:
        with h.scratch("fleet-") as tmp:
            for n in sizes:
                for kind in kinds:
                    h.say(f"{kind}, N={n}")
                    figures[f"{kind} N={n}"] = one_size(kind, target, server.pid, n, tmp)
                    h.say(f"  {figures[f'{kind} N={n}']}")
    finally:
        h.stop(server, 30)
    for n in sizes:
        ours, theirs = figures.get(f"eudaimon N={n}"), figures.get(f"pydantic-ai N={n}")
        if isinstance(ours, dict) and isinstance(theirs, dict) and theirs["completed"]:
            for key in ("wall s", "worker CPU s", "server CPU s"):
                figures[f"N={n} {key} eudaimon ÷ Pydantic AI"] = ours[key] / max(theirs[key], 1e-9)
    return figures


LIMITS = {"worker CPU s": 0.5, "server CPU s": 1.0, "wall s": 1.0}
"""The issue's targets: eudaimon ÷ Pydantic AI per run, same workload, server and run."""


def targets(f: dict[str, Any]) -> list[h.Target]:
    """Verdicts from the flattened figures (`eudaimon N=100 / wall s`), per N measured."""
    out = []
    sizes = sorted({int(k.split(" / ")[0].removeprefix("eudaimon N=")) for k in f if k.startswith("eudaimon N=")})
    for n in sizes:
        ours, theirs = f"eudaimon N={n} / ", f"pydantic-ai N={n} / "
        out.append(h.Target(f"N={n}: every run completes (runs not completed)", n - f[ours + "completed"], 0, ""))
        if not f.get(theirs + "completed"):
            continue
        for what, limit in LIMITS.items():
            mine, peer = f[ours + what] / f[ours + "completed"], f[theirs + what] / f[theirs + "completed"]
            out.append(
                h.Target(
                    f"N={n}: {what.removesuffix(' s')} per run ≤ {limit} × Pydantic AI's",
                    mine / max(peer, 1e-9),
                    limit,
                    f"{f[ours + what]:.2f} s ÷ {f[theirs + what]:.2f} s",
                )
            )
        events, peer_events = f[ours + "history events per run"], f[theirs + "history events per run"]
        out.append(
            h.Target(
                f"N={n}: history events per run ≤ Pydantic AI's",
                events / peer_events,
                1.0,
                f"{events:.0f} ÷ {peer_events:.0f}",
            )
        )
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(measure("--quick" in sys.argv), indent=1))
