"""Why a short in-memory run costs eudaimon more in `compare.py` than back to back.

`compare.py` calls `gc.collect()` before every timed run, so that no framework pays for another's
garbage. With the three peers loaded, that collection walks the whole heap and leaves the CPU
caches full of other objects: the run that follows starts cold. A peer's 10-step run lasts tens
of milliseconds and hardly notices; eudaimon's lasts about one, and a cold start is a large
part of it. This script measures that in one process, with the peers loaded and warmed as in
`compare.py`, the conditions alternating within every round:

- `collected`: built, `gc.collect()`, run: what `compare.py` times;
- `warm`: built and run right after the previous run, no collection;
- `built after collecting`: `gc.collect()`, then built (outside the timing), then run;
- `churned`: built, `gc.collect()`, then objects allocated and freed (outside the timing), run.

It also times each model call of a collected and a warm run (the gap between calls is a step),
and the collection itself.

    benchmarks/.peers/bin/python benchmarks/peers/cold_start.py [--rounds 150]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import fw_eudaimon  # noqa: E402
import runner  # noqa: E402
from transcript import Loop  # noqa: E402

from eudaimon import Message  # noqa: E402
from eudaimon.models import ChatRequest, FunctionModel  # noqa: E402


def stamped(answer: Callable[[ChatRequest], Message], stamps: list[int]) -> FunctionModel:
    """The harness's fake model, noting when each call begins."""

    def noted(request: ChatRequest) -> Message:
        stamps.append(time.perf_counter_ns())
        return answer(request)

    return FunctionModel(noted, model_id="fake")


def churn(objects: int) -> None:
    """Allocate and free `objects` small objects of several sizes."""
    held: list[object] = []
    for i in range(objects // 4):
        held += [(i, i), [i] * (i % 30), {"k": i}, "x" * (i % 200)]
    del held


async def conditions(k: int, rounds: int) -> dict[str, float]:
    loop = Loop(k)
    samples: dict[str, list[float]] = {"collected": [], "warm": [], "built after collecting": [], "churned": []}
    for r in range(rounds):
        for name in runner.rotate(list(samples), r):
            if name == "built after collecting":
                gc.collect()
            agent = fw_eudaimon.make(loop, max_steps=k)
            if name in ("collected", "churned"):
                gc.collect()
            if name == "churned":
                churn(8000)
            start = time.perf_counter()
            await fw_eudaimon.run(agent, loop.question())
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) * 1e6 for name, s in samples.items()}


async def timeline(k: int, rounds: int, collect: bool) -> list[float]:
    """Median µs from the start of the run to the first model call, between calls, and after the last."""
    loop = Loop(k)
    rows = []
    for _ in range(rounds):
        stamps: list[int] = []
        agent = fw_eudaimon.make(loop, max_steps=k, model=stamped(fw_eudaimon.answerer(loop), stamps))
        if collect:
            gc.collect()
        start = time.perf_counter_ns()
        await fw_eudaimon.run(agent, loop.question())
        points = [start, *stamps, time.perf_counter_ns()]
        rows.append([(b - a) / 1e3 for a, b in itertools.pairwise(points)])
    return [statistics.median(column) for column in zip(*rows, strict=True)]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    await runner.warm_up(runner.memory_configs())
    started = time.perf_counter()
    gc.collect()
    print(f"gc.collect(): {(time.perf_counter() - started) * 1e3:.0f} ms over {len(gc.get_objects()):,} objects\n")
    print("| K | " + " | ".join(["collected", "warm", "built after collecting", "churned"]) + " |")
    print("|---:|---:|---:|---:|---:|")
    for k in (1, 10):
        row = await conditions(k, args.rounds)
        print(f"| {k} | " + " | ".join(f"{v:,.0f} µs" for v in row.values()) + " |")
    print("\nK = 10, µs: start → 1st model call, each step between calls, last call → end")
    for collect in (True, False):
        parts = await timeline(10, args.rounds, collect)
        shown = " ".join(f"{p:.0f}" for p in parts)
        print(f"- {'collected' if collect else 'warm'}: {shown} (sum {sum(parts):,.0f})")


if __name__ == "__main__":
    asyncio.run(main())
