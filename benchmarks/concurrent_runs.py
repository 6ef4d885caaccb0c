"""Per-step CPU with 1,000 and 10,000 runs in flight against one run alone, and a timer on the same loop.

N runs start at once through `Agent.prompt` on one store, each on a conversation thread of its
own; each makes 6 model calls (a `FunctionModel` sleeping 50 ms, as a remote model would), the
first five asking for one READ tool call. One run alone is the same run with a model that
answers at once, 200 of them one after another: the step's own CPU, nothing else in flight
(in memory, the median of `LONE_REPEATS` such batches, each on a fresh store and loop: one batch
is 0.1 s, and single batches read 81-119 µs a step for the same tree in one run).
Every run's answer and tool count are checked as it ends, and only that verdict is kept (a kept
response would grow the heap the collector walks). Each (store, N) runs in a fresh
subprocess, memory (`MemoryStore`) and SQLite (`SqliteStore`, `synchronous=full`). Reported:
process CPU per step (all threads, the collector and SQLite's worker included), the part spent
collecting garbage, wall time, fsynced commits per step, and the p99 lateness of a 10 ms timer
ticking on the same loop, with and without the ticks a full collection overlapped; and the
timer on an idle loop (the machine's own noise).

In memory the same three are measured again in a process that tells the collector what `eudaimon
serve` and `eudaimon worker` tell it once they have started (`cli/_collector.py`: start-up
objects frozen, a full collection after 100 middle ones instead of 10), here once the warm-up
runs are done: the library leaves the collector as the process set it, so the targets are the
plain process's, and these figures say what the serving processes' policy changes.

Targets: CPU per step with 1,000 and with 10,000 runs in flight ≤ 1.25 × one run alone's, in
memory and on SQLite; every run completes.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
CALLS = 6
LONE = "one run alone"
LONE_REPEATS = 5
LONE_WAITING = 40
WAITING = "one run alone, its model waiting 50 ms"


async def runs(store_kind: str, n: int, path: str, collector: bool = False, waiting: bool = False) -> dict[str, Any]:
    """`n` runs at once (or, for `n` = 0, one at a time), measured on this loop; with `collector`,
    after the collector policy of `eudaimon serve` once the warm-up runs are done; with
    `waiting`, `LONE_WAITING` lone runs whose model waits as the runs in flight do, no timer."""
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ChatRequest, FunctionModel
    from eudaimon.stores import MemoryStore
    from eudaimon.stores.sqlite import SqliteStore

    latency_s = 0.050 if n or waiting else 0.0

    @tool(effect="read")
    async def lookup(key: str) -> str:
        """Look `key` up.

        Args:
            key: What to look up.
        """
        return f"value of {key}"

    async def model(request: ChatRequest) -> Message:
        if latency_s:
            await asyncio.sleep(latency_s)
        done = sum(1 for m in request.messages if m.role.value == "tool")
        if done + 1 >= CALLS:
            return Message.assistant(f"done: {request.messages[-1].content}")
        return Message.assistant(tool_calls=[ToolCall(f"c{done}", "lookup", {"key": f"{done}"})])

    store: Any = SqliteStore(path, synchronous="full") if store_kind == "sqlite" else MemoryStore()
    agent = Agent(FunctionModel(model), tools=[lookup], store=store, memory=None)
    for i in range(3):  # imports, caches
        await agent.prompt(f"warm-{i}", thread_id=f"warm-{i}")
    if collector:
        from eudaimon.cli._collector import freeze_start_up

        freeze_start_up()

    async def one(i: int) -> str | None:
        """One run, checked as it ends: what went wrong, or None."""
        try:
            response = await agent.prompt(f"k{i}", thread_id=f"t{i}")
        except Exception as exc:
            return type(exc).__name__
        tools = sum(1 for m in response.messages if m.role.value == "tool")
        if response.status != "completed" or tools != CALLS - 1 or response.final_text != f"done: value of {CALLS - 2}":
            return f"{response.status}, {tools} tool calls"
        return None

    commits = getattr(store, "commit_count", 0)
    ticker = h.Ticker()
    if not waiting:
        ticker.start()
    await asyncio.sleep(0.05)
    count = n or (LONE_WAITING if waiting else 200)
    with h.FullCollections() as collections:
        cpu, wall = time.process_time(), time.perf_counter()
        if n == 0:
            verdicts = [await one(i) for i in range(count)]
        else:
            verdicts = await asyncio.gather(*(one(i) for i in range(n)))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not waiting:
        await ticker.stop()
    steps = count * CALLS
    commits = getattr(store, "commit_count", 0) - commits
    await store.close()
    figures = {
        "CPU µs/step": cpu / steps * 1e6,
        "of which collecting garbage µs/step": collections.cpu_s / steps * 1e6,
        "wall s": wall,
        "commits/step": commits / steps,
        "longest full collection ms": max((b - a for a, b in collections.spans), default=0.0) * 1e3,
        "runs that failed": sum(v is not None for v in verdicts),
    }
    if not waiting:
        figures["timer p99 ms"] = ticker.p99_ms()
        figures["timer p99 without full-collection ticks ms"] = ticker.p99_ms(without=collections)
    return figures


def child(store_kind: str, n: int, collector: bool = False, waiting: bool = False) -> dict[str, Any]:
    """One configuration, in this (fresh) process: one run alone in memory is the batch of
    median CPU among `LONE_REPEATS`."""
    os.environ.setdefault("EUDAIMON_LEASE_TTL_S", "10")
    found = []
    for _ in range(LONE_REPEATS if n == 0 and store_kind == "memory" and not waiting else 1):
        with h.scratch("concurrent-") as root:
            found.append(asyncio.run(runs(store_kind, n, str(Path(root) / "runs.db"), collector, waiting)))
    return sorted(found, key=lambda figures: figures["CPU µs/step"])[len(found) // 2]


async def bare_sleep_cpu_us() -> float:
    """The process CPU one `asyncio.sleep(0.05)` costs on an otherwise idle loop."""
    cpu = time.process_time()
    for _ in range(40):
        await asyncio.sleep(0.05)
    return (time.process_time() - cpu) / 40 * 1e6


async def idle_timer() -> float:
    ticker = h.Ticker()
    ticker.start()
    await asyncio.sleep(2.0)
    await ticker.stop()
    return ticker.p99_ms()


def measure(quick: bool) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "idle loop: timer p99 ms": h.run_on_thread(idle_timer),
        "idle loop: CPU µs per bare asyncio.sleep(0.05)": h.run_on_thread(bare_sleep_cpu_us),
    }
    for store in ("memory", "sqlite"):
        for n in (0, 200) if quick else (0, 1000, 10000):
            label = LONE if n == 0 else f"{n:,} in flight"
            h.say(f"{store}, {label}")
            figures[f"{store}, {label}"] = h.in_subprocess("concurrent_runs:child", store, n)
    if not quick:
        h.say(f"memory, {WAITING}")
        figures[f"memory, {WAITING}"] = h.in_subprocess("concurrent_runs:child", "memory", 0, False, True)
    for n in (0, 200) if quick else (0, 1000, 10000):
        label = LONE if n == 0 else f"{n:,} in flight"
        h.say(f"memory, serve's collector policy, {label}")
        figures[f"memory with serve's collector policy, {label}"] = h.in_subprocess(
            "concurrent_runs:child", "memory", n, True
        )
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    out = []
    for store in ("memory", "sqlite"):
        lone = f[f"{store}, {LONE} / CPU µs/step"]
        for key in [k for k in f if k.startswith(f"{store}, ") and k.endswith(" in flight / CPU µs/step")]:
            n = key.split(", ", 1)[1].split(" in flight", 1)[0]
            out.append(
                h.Target(
                    f"{store}: CPU per step, {n} runs in flight ≤ 1.25 × one run alone",
                    f[key] / lone,
                    1.25,
                    f"{f[key]:.0f} ÷ {lone:.0f} µs",
                )
            )
    failed = sum(v for k, v in f.items() if k.endswith("runs that failed"))
    out.append(h.Target("every run completes (runs that failed)", failed, 0, "over every configuration"))
    return out
