"""A durable all-READ step's commits, fsyncs and time, with and without memory and a thread.

Issue 40 reported that the one commit of an all-READ step held only with the default memory and
no thread: a server gives every run a thread of its own, and `memory=None` is common. Here four
configurations run side by side on SQLite (`synchronous=full`, an fsync per commit): the default
memory or `memory=None`, each with no `thread_id` or a thread of each run's own. In each round,
each configuration drives RUNS runs of a K-step READ loop one after another on a fresh file (the
runs of the default thread take turns anyway), its order rotating between rounds. Reported per
step: commits (`SqliteStore.commit_count`), wall µs, process CPU µs, and, where `strace` is installed, the
`fdatasync`/`fsync` calls of a child process doing the same (its time is not used: strace slows
every call).

Targets: each configuration's commits per step equal to the fewest, its µs per step ≤ 1.1 × the
fastest configuration's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
K = 20
RUNS = 10
CONFIGS: dict[str, tuple[bool, bool]] = {
    "default memory, no thread": (True, False),
    "default memory, a thread each": (True, True),
    "memory=None, no thread": (False, False),
    "memory=None, a thread each": (False, True),
}
"""Each configuration: (default memory, a thread of each run's own)."""


async def runs(config: str, path: str, n: int) -> dict[str, float]:
    """`n` K-step READ runs of `config`, one after another, on a fresh `SqliteStore` at `path`:
    commits per step, wall µs per step and process CPU µs per step (all threads: on a loaded
    machine the wall time is mostly waiting for a core)."""
    from eudaimon.stores.sqlite import SqliteStore

    memory, threaded = CONFIGS[config]
    store = SqliteStore(path, synchronous="full")
    options: dict[str, Any] = {} if memory else {"memory": None}
    agents = [h.loop_agent(K, store=store, **options) for _ in range(n + 1)]
    await store.list_runs(limit=1)  # open the file and create the schema outside the timing
    h.checked(await agents[0].prompt("warm up", thread_id="warm" if threaded else None), K)
    commits, start, cpu = store.commit_count, time.perf_counter(), time.process_time()
    for i, agent in enumerate(agents[1:]):
        h.checked(await agent.prompt(f"run {i}", thread_id=f"thread-{i}" if threaded else None), K)
    elapsed, cpu, commits = time.perf_counter() - start, time.process_time() - cpu, store.commit_count - commits
    await store.close()
    steps = n * K
    return {"commits/step": commits / steps, "µs/step": elapsed / steps * 1e6, "CPU µs/step": cpu / steps * 1e6}


def one(config: str, path: str) -> dict[str, float]:
    """`runs` in this process (the child `fsyncs` traces)."""
    return h.run_on_thread(lambda: runs(config, path, RUNS))


def fsyncs(config: str, root: Path) -> float | None:
    """`fdatasync` + `fsync` calls per step of a child doing `one(config)`, counted by strace
    (warm-up run included, spread over the measured steps); None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    counts = root / f"strace-{abs(hash(config))}.txt"
    cmd = [strace, "-f", "-c", "-o", str(counts), "-e", "trace=fdatasync,fsync"]
    cmd += [sys.executable, str(h.HERE / "_harness.py"), "read_step_commits:one"]
    cmd.append(json.dumps([config, str(root / f"traced-{abs(hash(config))}.db")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=h.HERE)
    if proc.returncode != 0:
        raise RuntimeError(f"the traced child failed: {proc.stderr.strip().splitlines()[-3:]}")
    rows = [line.split() for line in counts.read_text().splitlines()]
    calls = sum(int(row[3]) for row in rows if len(row) >= 5 and row[-1] in ("fsync", "fdatasync"))
    return calls / (RUNS * K)


def measure(quick: bool) -> dict[str, Any]:
    n = 3 if quick else RUNS
    repeats = 1 if quick else 5
    samples: dict[str, list[float]] = {}
    with h.scratch("read-commits-") as root:
        names = list(CONFIGS)
        for r in range(repeats):
            h.say(f"repeat {r + 1} of {repeats}")
            for config in h.rotate(names, r):
                path = str(root / f"{r}-{names.index(config)}.db")
                got = h.run_on_thread(lambda c=config, p=path: runs(c, p, n))  # type: ignore[misc]
                for key, value in got.items():
                    samples.setdefault(f"{key} / {config}", []).append(value)
        figures: dict[str, Any] = {key: h.median(values) for key, values in samples.items()}
        if not quick:
            for config in names:
                traced = fsyncs(config, root)
                if traced is not None:
                    figures[f"fdatasync+fsync/step (strace) / {config}"] = traced
    figures["K"] = K
    figures["runs"] = n
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    times = {config: f[f"µs/step / {config}"] for config in CONFIGS}
    commits = {config: f[f"commits/step / {config}"] for config in CONFIGS}
    fastest, fewest = min(times, key=times.__getitem__), min(commits.values())
    verdicts = []
    for config in CONFIGS:
        if config == fastest:
            continue
        verdicts.append(
            h.Target(
                f"{config}: µs/step ≤ 1.1 × the fastest",
                times[config] / times[fastest],
                1.1,
                f"{times[config]:.0f} µs ÷ {fastest} {times[fastest]:.0f} µs",
            )
        )
    for config in CONFIGS:
        verdicts.append(
            h.Target(
                f"{config}: commits/step = the fewest",
                commits[config] / fewest,
                1.0,
                f"{commits[config]:.3f} ÷ {fewest:.3f}",
            )
        )
    return verdicts
