"""What a step costs: in memory as the run grows, and on SQLite against the disk's own durable commit.

A run of K steps is K-1 model turns that each call one async tool, then an answer, played by a
zero-latency `ScriptedModel` through `Agent.prompt`: what is measured is eudaimon (deciding the
next step, building the request, recording and folding events, journaling), not a model.
Rounds alternate, each run on a thread of its own after `gc.collect()`: one bare durable commit
(`sqlite3`, WAL, `synchronous=FULL`, in the same directory), the all-READ loop in memory, the
all-READ loop on `SqliteStore(synchronous="full")`, a commit, the loop with a WRITE tool (its
intent durable before it runs), a commit. Every run is checked to have completed K steps.

Targets (DESIGN §2: a READ step commits once, after the model answers; a WRITE step also
commits its intent before the tool runs, and each commit and the step's work are serial):
all-READ step ≤ 1.3 × (one commit + the in-memory step); WRITE step ≤ 1.3 × (two commits + the
in-memory step); in memory, flat in K (K=1000 ÷ K=10 ≤ 1.5).
"""

from __future__ import annotations

import gc
import time
from itertools import count
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
"""Process rounds; the alternation that matters happens within one (`measure`'s own rounds)."""


async def loop_run(k: int, path: Path | None, effect: str = "read") -> tuple[float, float]:
    """µs per step and commits per step of one K-step run: on a fresh SQLite file, or in memory."""
    from eudaimon.stores import MemoryStore
    from eudaimon.stores.sqlite import SqliteStore

    store: Any = MemoryStore() if path is None else SqliteStore(path, synchronous="full")
    if path is not None:
        await store.list_runs(limit=1)  # open the file (schema, WAL room) outside the timing
    agent = h.loop_agent(k, store=store, effect=effect)
    commits = getattr(store, "commit_count", 0)
    gc.collect()
    start = time.perf_counter()
    response = await agent.prompt("go")
    elapsed = time.perf_counter() - start
    h.checked(response, k)
    commits = getattr(store, "commit_count", 0) - commits
    await store.close()
    return elapsed / k * 1e6, commits / k


def measure(quick: bool) -> dict[str, float]:
    k, rounds = (20, 2) if quick else (100, 9)
    fresh = count()
    samples: dict[str, list[float]] = {}

    def keep(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    with h.scratch("step-") as root:

        def file(name: str) -> Path:
            return root / f"{name}-{next(fresh)}.db"

        def commit() -> None:
            keep("one durable commit µs", h.on_thread(lambda: h.commit_us(file("bare"))))

        def loop(name: str, path: Path | None, effect: str = "read", steps: int = k) -> None:
            us, commits = h.run_on_thread(lambda: loop_run(steps, path, effect))
            keep(f"{name} µs/step", us)
            if path is not None:
                keep(f"{name} commits/step", commits)

        h.run_on_thread(lambda: loop_run(10, file("warm")))  # imports, caches, the schema's first use
        for r in range(rounds):
            h.say(f"round {r + 1} of {rounds}")
            commit()
            loop(f"memory READ K={k}", None)
            loop(f"SQLite READ K={k}", file("read"))
            commit()
            loop(f"SQLite WRITE K={k}", file("write"), "write")
            commit()
            for steps in (10, 1000) if not quick else (10, 100):
                loop(f"memory READ K={steps}", None, steps=steps)
    figures = {key: h.median(values) for key, values in samples.items()}
    figures["K"] = k
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    k, commit = int(f["K"]), f["one durable commit µs"]
    memory, read, write = (
        f[f"memory READ K={k} µs/step"],
        f[f"SQLite READ K={k} µs/step"],
        f[f"SQLite WRITE K={k} µs/step"],
    )
    small = f["memory READ K=10 µs/step"]
    large = f.get("memory READ K=1000 µs/step", f.get("memory READ K=100 µs/step"))
    return [
        h.Target(
            "durable all-READ step ≤ 1.3 × (one commit + in-memory step)",
            read / (commit + memory),
            1.3,
            f"{read:.0f} µs ÷ ({commit:.0f} + {memory:.0f})",
        ),
        h.Target(
            "durable WRITE step ≤ 1.3 × (two commits + in-memory step)",
            write / (2 * commit + memory),
            1.3,
            f"{write:.0f} µs ÷ (2 × {commit:.0f} + {memory:.0f})",
        ),
        h.Target("in-memory step flat in K (largest K ÷ K=10)", large / small, 1.5, f"{large:.1f} ÷ {small:.1f} µs"),
    ]
