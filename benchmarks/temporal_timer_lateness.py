"""How late a 10 ms durable timer fires in `eudaimon worker` with 1,000 runs in flight, beside a bare Temporal timer.

Issue 35's target: p99 lateness of a 10 ms timer in `eudaimon worker` with 1,000 runs in flight
≤ 20 ms. On each of three Temporal dev servers (as it starts, and with
`history.timerProcessorMaxTimeShift` at 10 ms and 1 ms: see `SERVERS`), one `eudaimon worker` process serves
`peers.lateness_agent:make` (journal: SQLite on this repository's disk). First `HELD` runs (1,000)
are started at once, each asking its tool to wait an hour (`RetryAfter`): they are in flight,
waiting durably on Temporal timers, on that one worker. Then, while they wait, measured runs on the
same worker (`LATENESS_RUNS` of them, `LATENESS_PARALLEL` at a time) each wait `LATENESS_TIMER_S`
(10 ms) `LATENESS_TICKS` times over; lateness = when the journal says `tool_woke` minus the
`wake_at` its `tool_waiting` said. Side by side, in the same minutes on the same server, a bare
Temporal workflow (`peers.bare_timer`, a worker process of its own, no eudaimon) sleeps
`asyncio.sleep(0.01)` as often: the floor, the server's own timer and task dispatch, by the
workflow's clock as eudaimon's journal is.

It prints (and `measure` returns) starts/s of the held runs, how many were waiting when the
measuring began and when it ended (from the journal), and p50/p99/max of both. Run:
`python benchmarks/temporal_timer_lateness.py [HOST:PORT] [HELD]` (a server given: that one alone),
or `benchmarks/run.py temporal_timer` (heavy at 1,000: `flock /work/team/heavy.lock`).
Before the held runs start, the same timers are measured with no run held (`LATENESS_UNHELD=0`
skips that): what holding 1,000 adds. `LATENESS_SAMPLE=PATH` samples every thread of the worker
(`_sampler`) into PATH; `LATENESS_LATE_RUNS=PATH` writes there the journal and history of each run
with a wake more than 500 ms late.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import _harness as h
from fleet import cpu_s, peak_rss_mb

TIMERS_S = [float(t) for t in os.environ.get("LATENESS_TIMER_S", "0.01").split(",")]
"""The timers measured, in seconds (10 ms: the target; `LATENESS_TIMER_S=0.01,1.0` adds 1 s)."""
HOLD_S = 3600.0
SPEC = "peers.lateness_agent:make"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(h.SRC), str(h.HERE)])}


def _wait_for(proc: subprocess.Popen[bytes], log: Path, line: bytes) -> None:
    deadline = time.monotonic() + 120
    while line not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"a worker did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)


def start_workers(target: str, queue: str, store_url: str, tmp: Path) -> list[subprocess.Popen[bytes]]:
    """The `eudaimon worker` under measurement, and the bare timer's worker: processes of their own."""
    args = ["worker", "--temporal", target, "--task-queue", queue, "--agent", SPEC, "--store", store_url]
    args += os.environ.get("LATENESS_WORKER_ARGS", "").split()
    sample = os.environ.get("LATENESS_SAMPLE")
    if sample:  # the same CLI, with every thread sampled from the start
        boot = f"import _sampler, sys; _sampler.start({sample!r}); sys.argv = ['eudaimon', *sys.argv[1:]]; "
        command = [sys.executable, "-c", boot + "from eudaimon.cli import app; app(prog_name='eudaimon')", *args]
    else:
        command = [sys.executable, "-m", "eudaimon", *args]
    procs = []
    for cmd, name, ready in (
        (command, "eudaimon", f"worker for {SPEC}".encode()),
        ([sys.executable, "-m", "peers.bare_timer", target, f"{queue}-bare"], "bare", b"ready"),
    ):
        log = tmp / f"{queue}-{name}.log"
        with open(log, "wb") as out:
            procs.append(subprocess.Popen(cmd, cwd=h.HERE, stdout=out, stderr=subprocess.STDOUT, env=_env()))
        _wait_for(procs[-1], log, ready)
    time.sleep(1.0)  # polling
    return procs


async def _dump(client: Any, store: Any, run_id: str, late_ms: float, path: str) -> None:
    """A late wake's run: its journal and its workflow's history, times from the run's start."""
    events = await store.load(run_id)
    history = await client.get_workflow_handle(run_id).fetch_history()
    t0 = events[0].at
    lines = [f"== {run_id}: a wake {late_ms:.0f} ms late"]
    lines += [f"  journal {(e.at - t0).total_seconds() * 1000:8.1f} {e.type}" for e in events]
    for e in history.events:
        at = (e.event_time.ToDatetime().replace(tzinfo=t0.tzinfo) - t0).total_seconds() * 1000
        lines.append(f"  history {at:8.1f} {e.WhichOneof('attributes')}")
    with open(path, "a") as out:
        out.write("\n".join(lines) + "\n")


def quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0.0}
    q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    return {"n": float(len(values)), "p50 ms": q[49], "p99 ms": q[98], "max ms": max(values)}


async def waiting_count(store: Any, ids: list[str]) -> int:
    """How many of `ids` the journal shows waiting (last event `tool_waiting`): in flight."""
    summaries = await store.list_runs(limit=len(ids) + 1000)
    wanted = set(ids)
    return sum(1 for s in summaries if s.run_id in wanted and s.last_event_type == "tool_waiting")


async def lateness(
    target: str, queue: str, store_url: str, held: int, runs: int, ticks: int, parallel: int
) -> dict[str, Any]:
    from peers import lateness_agent
    from temporalio.client import Client

    from eudaimon.stores.url import open_store
    from eudaimon.temporal import TemporalEngine

    client = await Client.connect(target)
    store = open_store(store_url)
    agent = lateness_agent.make(store=store_url, engine=TemporalEngine(target, task_queue=queue))
    figures: dict[str, Any] = {}

    # 0. the same timers with no run held, on the same server and worker: what holding 1,000 adds
    if os.environ.get("LATENESS_UNHELD", "1") == "1":
        for timer_s in TIMERS_S:
            figures[f"{timer_s * 1000:g} ms timer, no run held"] = await measured_timers(
                agent, client, store, queue, [], timer_s, runs, ticks, parallel
            )

    # 1. the held runs, started at once: each returns when its run waits (the `settled` Update)
    held_ids = [f"held-{uuid.uuid4().hex[:12]}" for _ in range(held)]
    started = time.perf_counter()
    answers = await asyncio.gather(*(agent.prompt(f"hold {HOLD_S}", run_id=r) for r in held_ids))
    took = time.perf_counter() - started
    figures["held runs"] = float(held)
    figures["held: starts/s (all waiting)"] = held / took
    figures["held: waiting before measuring"] = float(await waiting_count(store, held_ids))
    h.say(f"{held} held runs waiting after {took:.1f} s ({sum(a.status == 'waiting' for a in answers)} said so)")

    # 2. measured timers, eudaimon's and the bare floor's, in the same minutes, for each length
    for timer_s in TIMERS_S:
        figures[f"{timer_s * 1000:g} ms timer"] = await measured_timers(
            agent, client, store, queue, held_ids, timer_s, runs, ticks, parallel
        )
    figures["load average (1 min) at the end"] = os.getloadavg()[0]
    await agent.aclose()
    await store.close()
    return figures


async def measured_timers(
    agent: Any,
    client: Any,
    store: Any,
    queue: str,
    held_ids: list[str],
    timer_s: float,
    runs: int,
    ticks: int,
    parallel: int,
) -> dict[str, Any]:
    """`runs` eudaimon runs on the worker each waiting `timer_s` `ticks` times over, and as many bare
    Temporal workflows sleeping as often, `parallel` of each at a time: their lateness."""
    from eudaimon.core.events import ToolWaiting, ToolWoke

    figures: dict[str, Any] = {}
    gate = asyncio.Semaphore(parallel)

    async def measured(run_id: str) -> None:
        async with gate:
            await agent.prompt(f"tick {timer_s} {ticks}", run_id=run_id)  # returns at its first wait
            await client.get_workflow_handle(run_id).result()

    async def bare(i: int) -> list[float]:
        async with gate:
            found: list[float] = await client.execute_workflow(
                "BareTimer", args=[timer_s, ticks], id=f"bare-{i}-{uuid.uuid4().hex[:8]}", task_queue=f"{queue}-bare"
            )
            return found

    ids = [f"tick-{uuid.uuid4().hex[:12]}" for _ in range(runs)]
    started = time.perf_counter()
    cpu0 = {name: cpu_s(pid) for name, pid in PIDS.items()}
    done = await asyncio.gather(*(measured(r) for r in ids), *(bare(i) for i in range(runs)))
    figures["measuring s"] = time.perf_counter() - started
    for name, pid in PIDS.items():
        figures[f"{name} CPU s while measuring"] = cpu_s(pid) - cpu0[name]
    figures["held: waiting after measuring"] = float(await waiting_count(store, held_ids))

    late: list[float] = []
    for run_id in ids:
        wake_at: dict[str, datetime] = {}
        for event in await store.load(run_id):
            if isinstance(event.data, ToolWaiting):
                wake_at[event.data.call_id] = event.data.wake_at
            elif isinstance(event.data, ToolWoke):
                late.append((event.at - wake_at.pop(event.data.call_id)).total_seconds() * 1000.0)
                if late[-1] > 500 and os.environ.get("LATENESS_LATE_RUNS"):  # a look at their histories
                    await _dump(client, store, run_id, late[-1], os.environ["LATENESS_LATE_RUNS"])
    timers = 0  # how many of eudaimon's wakes went through a Temporal timer at all
    for run_id in ids:
        history = await client.get_workflow_handle(run_id).fetch_history()
        timers += sum(e.HasField("timer_started_event_attributes") for e in history.events)
    figures["eudaimon worker: Temporal timers started"] = float(timers)
    floor = [ms for found in done[runs:] if isinstance(found, list) for ms in found]
    figures["eudaimon worker"] = quantiles(late)
    figures["eudaimon worker: wakes later than 500 ms"] = float(sum(ms > 500 for ms in late))
    figures["bare Temporal workflow (floor)"] = quantiles(floor)
    h.say(f"{timer_s * 1000:g} ms timers: {figures}")
    return figures


PIDS: dict[str, int] = {}
"""The processes whose CPU time is measured: the eudaimon worker, the bare timer's worker, the server."""


SERVERS = {
    "default": ("dev server as it starts", ()),
    "10ms": ("dev server, timer shift 10 ms", ("--dynamic-config-value", 'history.timerProcessorMaxTimeShift="10ms"')),
    "1ms": ("dev server, timer shift 1 ms", ("--dynamic-config-value", 'history.timerProcessorMaxTimeShift="1ms"')),
}
"""The Temporal dev servers measured on (`LATENESS_SERVERS=default,10ms,1ms`, all by default): Temporal
moves a timer due sooner than `history.timerProcessorMaxTimeShift` (1 s by default) from now to that
far ahead (its history service's task key manager), so a 10 ms timer fires ~1 s late on a server as
it starts, whoever sets it."""


def measure(quick: bool, target: str | None = None, held: int | None = None) -> dict[str, Any]:
    h.requires("temporalio")
    held = held if held is not None else int(os.environ.get("LATENESS_HELD", "50" if quick else "1000"))
    if target is not None:
        PIDS.pop("server", None)
        return one_server(target, held)
    from temporal_step import start_server

    picked = os.environ.get("LATENESS_SERVERS", ",".join(SERVERS)).split(",")
    figures: dict[str, Any] = {}
    for key in picked:
        name, options = SERVERS[key]
        server, started = start_server(*options)
        PIDS["server"] = server.pid
        try:
            h.say(name)
            figures[name] = one_server(started, held)
        finally:
            h.stop(server, 30)
    return figures


def one_server(target: str, held: int) -> dict[str, Any]:
    runs = int(os.environ.get("LATENESS_RUNS", "100"))
    ticks = int(os.environ.get("LATENESS_TICKS", "5"))
    parallel = int(os.environ.get("LATENESS_PARALLEL", "10"))
    queue = f"lateness-{uuid.uuid4().hex[:6]}"
    with h.scratch("lateness-") as tmp:
        store_url = os.environ.get("LATENESS_STORE") or f"sqlite:///{tmp / f'{queue}.db'}"
        workers = start_workers(target, queue, store_url, tmp)
        PIDS["eudaimon worker"], PIDS["bare timer's worker"] = workers[0].pid, workers[1].pid
        try:
            figures = h.run_on_thread(lambda: lateness(target, queue, store_url, held, runs, ticks, parallel))
            figures["worker peak RSS MB"] = peak_rss_mb(workers[0].pid)
        finally:
            for worker in workers:
                h.stop(worker, 30)
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    """Per server and timer length: p99 ≤ 20 ms late (the issue's target is the 10 ms timer's),
    beside a bare Temporal timer's p99 on the same server; and the held runs waiting throughout."""
    out = []
    for server in sorted({k.split(" / ")[0] for k in f if k.endswith(" / held runs")}):
        held = f[f"{server} / held runs"]
        waiting = f[f"{server} / held: waiting before measuring"]
        suffix = " / eudaimon worker / p99 ms"
        for key in sorted(k for k in f if k.startswith(f"{server} / ") and k.endswith(suffix)):
            length = key.removesuffix(suffix)
            floor = f[f"{length} / bare Temporal workflow (floor) / p99 ms"]
            unheld = length.endswith("no run held")
            if not unheld:
                waiting = min(waiting, f[f"{length} / held: waiting after measuring"])
            flight = "" if unheld else f", {held:.0f} runs in flight"
            out.append(
                h.Target(
                    f"{length.replace(' / ', ': ')}: p99 lateness in `eudaimon worker`{flight} ≤ 20 ms",
                    f[key],
                    20.0,
                    f"a bare Temporal workflow's sleep on that server, same minutes: p99 {floor:.1f} ms",
                )
            )
        out.append(h.Target(f"{server}: the held runs were in flight throughout (not waiting)", held - waiting, 0, ""))
    return out


if __name__ == "__main__":
    import json

    args = sys.argv[1:]
    given = args[0] if args and ":" in args[0] else None
    count = int(args[-1]) if args and args[-1].isdigit() else None
    print(json.dumps(measure(False, given, count), indent=1))
