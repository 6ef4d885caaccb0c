"""eudaimon's 20-step tool loop beside Pydantic AI, the OpenAI Agents SDK and LangGraph, and a run's start.

Every framework is driven by one transcript (`peers/transcript.py`: K-1 turns that each call
`echo(i)`, then an answer, decided from the latest message only, so every fake costs O(1) a
call) with all four frameworks loaded in the process. Within each round every configuration
runs once, the first one rotating; each run on a thread of its own, its agent built outside the
timing, `gc.collect()` just before it (so no run pays for another's garbage, and every run starts
with cold caches, as a run after a pause does). Each framework's final answer and tool-call
count are checked against the transcript before a figure is kept. Durable: eudaimon's
`SqliteStore` and LangGraph's SQLite savers, each `synchronous=FULL` (an fsync per commit).
A run's start is the time from `Agent.prompt` to its first model call, in the same eudaimon runs.

Targets: eudaimon's in-memory step ≤ 1/30 of the fastest peer's; its start ≤ 3 × its step.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
K = 20

_STARTS = {
    "eudaimon": "eudaimon's start (prompt to first model call) µs",
    "eudaimon, no gc.collect() before (warm)": "eudaimon's start, no gc.collect() before (warm caches) µs",
}
"""The start is timed in both eudaimon configurations: a full collection just before a run walks
every object of the process and leaves the CPU's caches cold for the start (a walk over 16 MB of
plain memory in its place slows the start as much), which the warm figure shows apart."""


def measure(quick: bool) -> dict[str, Any]:
    h.requires("langgraph", "pydantic_ai", "agents", "langgraph.checkpoint.sqlite")
    from peers import load
    from peers.transcript import Loop

    e, pa, oa, lg = (load(name) for name in ("eudaimon", "pydantic_ai", "openai_agents", "langgraph"))
    rounds = 3 if quick else 20
    t = Loop(K)
    stamps: list[float] = []
    memory: dict[str, tuple[Callable[..., Any], Any, bool]] = {
        "eudaimon": (lambda: e.make(t, max_steps=K, calls=stamps), e.run, True),
        "eudaimon, no gc.collect() before (warm)": (lambda: e.make(t, max_steps=K, calls=stamps), e.run, False),
        "Pydantic AI": (lambda: pa.make(t), pa.run, True),
        "OpenAI Agents": (lambda: oa.make(t), oa.run, True),
        "LangGraph": (lambda: lg.make(t), lg.run, True),
        "LangGraph, InMemorySaver": (lambda: lg.make_in_memory_saver(t), lg.run, True),
    }
    fresh = count()
    samples: dict[str, list[float]] = {}

    def memory_run(name: str) -> Any:
        build, run, collect = memory[name]

        async def go() -> Any:
            agent = build()
            stamps.clear()
            if collect:
                gc.collect()
            start = time.perf_counter()
            outcome = await run(agent, t.question(), max_steps=K)
            samples.setdefault(f"in memory, µs/step / {name}", []).append((time.perf_counter() - start) / K * 1e6)
            if name in _STARTS:
                samples.setdefault(_STARTS[name], []).append((stamps[0] - start) * 1e6)
            return outcome

        return h.run_on_thread(go)

    with h.scratch("peers-") as root:

        def db() -> Path:
            return root / f"{next(fresh)}.db"

        durable: dict[str, Callable[[], Any]] = {
            "eudaimon, SqliteStore": lambda: h.run_on_thread(lambda: e.durable_loop(t, db(), K)),
            "LangGraph SqliteSaver, durability=sync": lambda: h.on_thread(
                lambda: lg.durable_loop_sync(t, db(), K, "sync")
            ),
            "LangGraph SqliteSaver, durability=async (default)": lambda: h.on_thread(
                lambda: lg.durable_loop_sync(t, db(), K, "async")
            ),
        }

        def durable_run(name: str) -> Any:
            gc.collect()
            seconds, outcome, *commits = durable[name]()
            samples.setdefault(f"SQLite, µs/step / {name}", []).append(seconds / K * 1e6)
            if commits:
                samples.setdefault(f"SQLite, commits/step / {name}", []).append(commits[0])
            return outcome

        for name in memory:  # warm up: imports, caches, schemas
            memory_run(name)
        for name in durable:
            durable_run(name)
        samples.clear()
        configs = [(memory_run, name) for name in memory] + [(durable_run, name) for name in durable]
        for r in range(rounds):
            h.say(f"round {r + 1} of {rounds}")
            for run, name in h.rotate(configs, r):
                outcome = run(name)
                if (outcome.final, outcome.tool_calls) != t.expected():
                    raise AssertionError(f"{name} did other work: {outcome}, expected {t.expected()}")
    figures: dict[str, Any] = {key: h.median(values) for key, values in samples.items()}
    figures["K"] = K
    return figures


PEERS = ("Pydantic AI", "OpenAI Agents", "LangGraph", "LangGraph, InMemorySaver")


def targets(f: dict[str, Any]) -> list[h.Target]:
    step = f["in memory, µs/step / eudaimon"]
    fastest = min(PEERS, key=lambda peer: f[f"in memory, µs/step / {peer}"])
    peer = f[f"in memory, µs/step / {fastest}"]
    start = f["eudaimon's start (prompt to first model call) µs"]
    return [
        h.Target(
            "in-memory step ≤ 1/30 of the fastest peer's",
            step / peer,
            1 / 30,
            f"{step:.0f} µs ÷ {fastest} {peer:.0f} µs = 1/{peer / step:.1f}",
        ),
        h.Target("a run's start ≤ 3 × the in-memory step", start / step, 3.0, f"{start:.0f} µs ÷ {step:.0f} µs"),
    ]
