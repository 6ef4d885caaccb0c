"""A durable all-READ step's commits, fsyncs and time, with and without memory and a thread.

Issue 40 reported that the one commit of an all-READ step held only with the default memory and
no thread: a server gives every run a thread of its own, and `memory=None` is common. Here four
configurations run side by side on SQLite (`synchronous=full`, an fsync per commit): the default
memory or `memory=None`, each with no `thread_id` or a thread of each run's own. In each repeat,
the four take turns run by run (a K-step READ loop each, the order rotating from run to run) on
ONE fresh file, each through a `SqliteStore` of its own (so each counts its own commits). Reported
per step: commits (`SqliteStore.commit_count`), wall µs and process CPU µs (each the median over
the configuration's runs), and, where `strace` is installed, the `fdatasync`/`fsync` calls of a
child process doing the same for one configuration alone (its time is not used: strace slows
every call).

Why one file, run by run: an fsync's time here depends on the file more than on what was
written. With each configuration on a fresh file of its own (as this workload first did), four
copies of ONE configuration, interleaved run by run, differed by 1.46 to 1.77 times in median µs
per step, a different file the slow one each time; on one shared file the same four copies
differed by 1.05 (notes/commits.md). Configurations measured in blocks on files of their own
measured the files.

Targets: each configuration's commits per step equal to the fewest, its µs per step ≤ 1.1 × the
fastest configuration's, in the same round (`targets`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
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
    """`n` K-step READ runs of `config` alone, one after another, on a fresh `SqliteStore` at
    `path` (what the child `fsyncs` traces): commits per step, and the median wall µs and
    process CPU µs per step of its runs."""
    got = (await side_by_side([config], path, n))[config]
    return {"commits/step": got.commits / got.steps, "µs/step": h.median(got.wall), "CPU µs/step": h.median(got.cpu)}


@dataclass
class Runs:
    """One configuration's measured runs in one file: its commits and steps, and each run's
    wall µs and process CPU µs per step (CPU of all threads: on a loaded machine the wall time
    is mostly waiting for a core)."""

    commits: int = 0
    steps: int = 0
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


async def side_by_side(configs: list[str], path: str, n: int) -> dict[str, Runs]:
    """`n` K-step READ runs of each of `configs`, taking turns run by run (the order rotating
    from one run to the next), all on the one fresh file at `path`, each configuration through a
    `SqliteStore` of its own, which counts its own commits."""
    from eudaimon.stores.sqlite import SqliteStore

    stores = {config: SqliteStore(path, synchronous="full") for config in configs}
    agents: dict[str, list[Any]] = {}
    for config, store in stores.items():
        options: dict[str, Any] = {} if CONFIGS[config][0] else {"memory": None}
        agents[config] = [h.loop_agent(K, store=store, **options) for _ in range(n + 1)]
    await stores[configs[0]].list_runs(limit=1)  # open the file and create the schema outside the timing
    for config in configs:  # a warm-up run each, outside the timing
        threaded = CONFIGS[config][1]
        h.checked(await agents[config][0].prompt("warm up", thread_id=f"warm {config}" if threaded else None), K)
    got = {config: Runs(commits=-store.commit_count) for config, store in stores.items()}
    for i in range(n):
        for config in h.rotate(configs, i):
            thread_id = f"{config} {i}" if CONFIGS[config][1] else None
            start, used = time.perf_counter(), time.process_time()
            h.checked(await agents[config][i + 1].prompt(f"run {i}", thread_id=thread_id), K)
            got[config].wall.append((time.perf_counter() - start) / K * 1e6)
            got[config].cpu.append((time.process_time() - used) / K * 1e6)
    for config, store in stores.items():
        got[config].commits += store.commit_count
        got[config].steps = n * K
        await store.close()
    return got


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
    names = list(CONFIGS)
    pooled = {config: Runs() for config in names}
    with h.scratch("read-commits-") as root:
        for r in range(repeats):
            h.say(f"repeat {r + 1} of {repeats}")
            path = str(root / f"{r}.db")
            got = h.run_on_thread(lambda p=path, o=h.rotate(names, r): side_by_side(o, p, n))  # type: ignore[misc]
            for config, runs_ in got.items():
                into = pooled[config]
                into.commits, into.steps = into.commits + runs_.commits, into.steps + runs_.steps
                into.wall += runs_.wall
                into.cpu += runs_.cpu
        figures: dict[str, Any] = {}
        for config, all_runs in pooled.items():
            figures[f"commits/step / {config}"] = all_runs.commits / all_runs.steps
            figures[f"µs/step / {config}"] = h.median(all_runs.wall)
            figures[f"CPU µs/step / {config}"] = h.median(all_runs.cpu)
        fastest = min(figures[f"µs/step / {config}"] for config in names)
        for config in names:
            figures[f"µs/step ÷ this round's fastest / {config}"] = figures[f"µs/step / {config}"] / fastest
        if not quick:
            for config in names:
                traced = fsyncs(config, root)
                if traced is not None:
                    figures[f"fdatasync+fsync/step (strace) / {config}"] = traced
    figures["K"] = K
    figures["runs"] = n * repeats
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    """Each configuration's µs per step against the fastest's of the same round (the median of
    those ratios over the rounds): rounds are separate processes, minutes apart, whose level
    differed by a fifth here, so the median of each configuration's µs over the rounds could
    come from different rounds, and compare one round's slowness with another's speed."""
    commits = {config: f[f"commits/step / {config}"] for config in CONFIGS}
    fewest = min(commits.values())
    verdicts = []
    for config in CONFIGS:
        ratio = f[f"µs/step ÷ this round's fastest / {config}"]
        verdicts.append(
            h.Target(
                f"{config}: µs/step ≤ 1.1 × the fastest",
                ratio,
                1.1,
                f"{f[f'µs/step / {config}']:.0f} µs; the median over the rounds of its µs ÷ the round's fastest",
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
