"""The workloads, run side by side: frameworks alternate within every round, figures are medians.

Each function returns plain data (dicts of floats) that `report.py` renders. Every workload
first checks that each framework's final output and tool-call count equal the transcript's
expectation, hence each other's, and prints that check; a mismatch raises, so no figure from a
run that did different work is ever accepted.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import LoopLag, Outcome, vm_hwm_kib, vm_rss_kib
from transcript import Loop, Parallel, PerRun, Stream, Thread

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "out"
"""Scratch space for database files: on the repository's disk (not a tmpfs), gitignored."""

FRAMEWORKS = ("eudaimon", "langgraph", "pydantic_ai", "openai_agents")
MODULES = {name: f"fw_{name}" for name in FRAMEWORKS}


def load(name: str) -> Any:
    return importlib.import_module(MODULES[name])


def label(name: str) -> str:
    return str(load(name).NAME)


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def rotate(items: list[Any], by: int) -> list[Any]:
    by %= len(items)
    return items[by:] + items[:by]


def check(what: str, outcomes: dict[str, Outcome], expected: tuple[str, int]) -> None:
    """Every framework's (final output, tool calls) must equal the expectation, hence each other."""
    got = {fw: (o.final, o.tool_calls) for fw, o in outcomes.items()}
    bad = {fw: g for fw, g in got.items() if g != expected}
    final, calls = expected
    shown = final if len(final) <= 48 else final[:45] + "..."
    if bad:
        raise AssertionError(f"[check] {what}: outputs differ from {expected!r}: {bad!r}")
    print(f"  [check] {what}: {len(got)} configs agree: final={shown!r} tool_calls={calls}  OK", flush=True)


# -- configs for the in-memory workloads -----------------------------------------------------


class Config:
    """A framework in one configuration: how to build an agent for a transcript and run it."""

    def __init__(self, key: str, fw: str, title: str, make: Callable[..., Any]) -> None:
        self.key, self.fw, self.title, self.make_fn = key, fw, title, make
        self.mod = load(fw)

    def make(self, transcript: Any, **kw: Any) -> Any:
        return self.make_fn(self.mod, transcript, **kw)

    async def run(self, agent: Any, question: str, **kw: Any) -> Outcome:
        return await self.mod.run(agent, question, **kw)


def memory_configs() -> list[Config]:
    return [
        Config("eudaimon", "eudaimon", "eudaimon (MemoryStore)", lambda m, t, **kw: m.make(t, **kw)),
        Config("langgraph", "langgraph", "LangGraph (no checkpointer)", lambda m, t, **kw: m.make(t, **kw)),
        Config(
            "langgraph_mem",
            "langgraph",
            "LangGraph (InMemorySaver)",
            lambda m, t, **kw: m.make_in_memory_saver(t, **kw),
        ),
        Config("pydantic_ai", "pydantic_ai", "Pydantic AI", lambda m, t, **kw: m.make(t, **kw)),
        Config("openai_agents", "openai_agents", "OpenAI Agents SDK", lambda m, t, **kw: m.make(t, **kw)),
    ]


async def warm_up(configs: list[Config]) -> None:
    for cfg in configs:
        for k in (3, 10):
            t = Loop(k)
            await cfg.run(cfg.make(t, max_steps=k), t.question(), max_steps=k)
        t = Parallel(3)
        await cfg.run(cfg.make(t), t.question())


# -- (1) construction ------------------------------------------------------------------------


def w1_construct(rounds: int) -> dict[str, Any]:
    print("(1) construction of an agent with one tool", flush=True)
    names = list(FRAMEWORKS)
    for fw in names:  # warm: imports, schema caches
        load(fw).construct()
    samples: dict[str, list[float]] = {fw: [] for fw in names}
    for r in range(rounds):
        for fw in rotate(names, r):
            construct = load(fw).construct
            gc.collect()
            start = time.perf_counter()
            construct()
            samples[fw].append(time.perf_counter() - start)
    return {
        "rows": {fw: {"us": median(s) * 1e6, "us_min": min(s) * 1e6} for fw, s in samples.items()},
        "rounds": rounds,
    }


# -- (2) sequential tool loop, in memory ------------------------------------------------------


async def w2_loop(ks: list[int], rounds: dict[int, int]) -> dict[str, Any]:
    print("(2) sequential tool loop, in memory", flush=True)
    configs = memory_configs()
    await warm_up(configs)
    out: dict[str, Any] = {"titles": {c.key: c.title for c in configs}, "by_k": {}, "rounds": rounds}
    for k in ks:
        t = Loop(k)
        samples: dict[str, list[float]] = {c.key: [] for c in configs}
        for r in range(rounds[k]):
            outcomes: dict[str, Outcome] = {}
            for cfg in rotate(configs, r):
                agent = cfg.make(t, max_steps=k)
                gc.collect()
                start = time.perf_counter()
                outcomes[cfg.key] = await cfg.run(agent, t.question(), max_steps=k)
                samples[cfg.key].append(time.perf_counter() - start)
                del agent
            if r == 0:
                check(f"loop K={k}", outcomes, t.expected())
        out["by_k"][k] = {
            key: {"us_per_step": median(s) / k * 1e6, "us_per_step_min": min(s) / k * 1e6, "run_ms": median(s) * 1e3}
            for key, s in samples.items()
        }
        line = ", ".join(f"{key} {v['us_per_step']:.0f}" for key, v in out["by_k"][k].items())
        print(f"    K={k}: µs/step {line}", flush=True)
    return out


# -- (3) one turn with N parallel tool calls --------------------------------------------------


async def w3_parallel(n: int, rounds: int) -> dict[str, Any]:
    print(f"(3) one turn with {n} parallel tool calls", flush=True)
    configs = memory_configs()
    t = Parallel(n)
    agents = {c.key: c for c in configs}
    samples: dict[str, list[float]] = {c.key: [] for c in configs}
    for r in range(rounds):
        outcomes: dict[str, Outcome] = {}
        for cfg in rotate(configs, r):
            agent = cfg.make(t)
            gc.collect()
            start = time.perf_counter()
            outcomes[cfg.key] = await cfg.run(agent, t.question())
            samples[cfg.key].append(time.perf_counter() - start)
        if r == 0:
            check(f"parallel n={n}", outcomes, t.expected())
    return {
        "titles": {k: c.title for k, c in agents.items()},
        "rows": {key: {"us": median(s) * 1e6, "us_min": min(s) * 1e6} for key, s in samples.items()},
        "n": n,
        "rounds": rounds,
    }


# -- (7) streaming ---------------------------------------------------------------------------


async def w7_stream(n: int, rounds: int) -> dict[str, Any]:
    print(f"(7) streaming: one answer of {n} text deltas", flush=True)
    names = list(FRAMEWORKS)
    t = Stream(n)
    samples: dict[str, list[float]] = {fw: [] for fw in names}
    for fw in names:  # warm up
        await load(fw).stream(load(fw).make(Stream(10)), "warm")
    for r in range(rounds):
        got: dict[str, Outcome] = {}
        for fw in rotate(names, r):
            mod = load(fw)
            agent = mod.make(t)
            gc.collect()
            start = time.perf_counter()
            deltas, outcome = await mod.stream(agent, t.question())
            samples[fw].append(time.perf_counter() - start)
            got[fw] = Outcome(outcome.final, deltas)
        if r == 0:
            # Here the second figure is the number of text deltas the caller received.
            check(f"stream n={n} (final text, deltas received)", got, (t.text, n))
    return {
        "rows": {fw: {"us_per_delta": median(s) / n * 1e6, "run_ms": median(s) * 1e3} for fw, s in samples.items()},
        "n": n,
        "rounds": rounds,
    }


# -- (6) durable per-step on SQLite, fsync per commit ------------------------------------------


async def w6_durable(k: int, rounds: int) -> dict[str, Any]:
    print(f"(6) durable loop of K={k} on SQLite with synchronous=FULL", flush=True)
    e, lg = load("eudaimon"), load("langgraph")
    t = Loop(k)
    configs: list[tuple[str, str, Callable[[Path], Any]]] = [
        ("eudaimon", "eudaimon (SqliteStore, synchronous=full)", lambda p: e.durable_loop(t, p, k)),
        (
            "lg_sync_async",
            "LangGraph SqliteSaver, invoke, durability=async (default)",
            lambda p: _as_async(lg.durable_loop_sync, t, p, k, "async"),
        ),
        (
            "lg_sync_sync",
            "LangGraph SqliteSaver, invoke, durability=sync",
            lambda p: _as_async(lg.durable_loop_sync, t, p, k, "sync"),
        ),
        (
            "lg_aio_async",
            "LangGraph AsyncSqliteSaver, ainvoke, durability=async (default)",
            lambda p: lg.durable_loop_async(t, p, k, "async"),
        ),
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="durable-", dir=OUT))
    samples: dict[str, list[float]] = {key: [] for key, _, _ in configs}
    commits: dict[str, list[int]] = {key: [] for key, _, _ in configs}
    sync_note: dict[str, str] = {}
    counter = 0
    try:
        for key, _, fn in configs:  # warm up (imports, schema) on small files
            await fn(tmp / f"warm-{key}.db")
        for r in range(rounds):
            outcomes: dict[str, Outcome] = {}
            for key, _, fn in rotate(configs, r):
                counter += 1
                gc.collect()
                elapsed, outcome, info = await fn(tmp / f"{key}-{counter}.db")
                samples[key].append(elapsed)
                commits[key].append(int(info["commits"]))
                sync_note[key] = str(info["synchronous"])
                outcomes[key] = outcome
            if r == 0:
                check(f"durable loop K={k}", outcomes, t.expected())
        # eudaimon's commits split into per-step and per-run parts: one more run at K=10.
        _, _, small = await e.durable_loop(Loop(10), tmp / "small.db", 10)
        per_step = (max(commits["eudaimon"]) - small["commits"]) / (k - 10)
        per_run = max(commits["eudaimon"]) - per_step * k
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "eudaimon_commits_split": {"per_step": per_step, "per_run": per_run, "k10": small["commits"]},
        "k": k,
        "rounds": rounds,
        "titles": {key: title for key, title, _ in configs},
        "rows": {
            key: {
                "us_per_step": median(s) / k * 1e6,
                "us_per_step_min": min(s) / k * 1e6,
                "commits_per_step": max(commits[key]) / k,
                "synchronous": sync_note[key],
            }
            for key, s in samples.items()
        },
        "fsync_us": fsync_cost(OUT),
        "commit_floor_us": sqlite_commit_floor(OUT),
    }


async def _as_async(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def sqlite_commit_floor(directory: Path, n: int = 300) -> dict[str, float]:
    """Median µs of the cheapest durable SQLite commit here: one 300-byte row, WAL,
    synchronous=FULL; first while the commits lengthen the WAL (a fresh file), then once a
    checkpoint has let them write over the blocks it already has. Two per step are the floor
    under eudaimon's two commit points."""
    import sqlite3

    path = directory / "commit-floor.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)

    def commits(first: int) -> float:
        times = []
        for i in range(first, first + n):
            start = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?, ?, ?)", ("run", i, "x" * 300))
            conn.execute("COMMIT")
            times.append(time.perf_counter() - start)
        return median(times) * 1e6

    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("CREATE TABLE t (run TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (run, seq))")
        growing = commits(0)
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        reused = commits(n)
    finally:
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return {"growing": growing, "reused": reused}


def fsync_cost(directory: Path, n: int = 200) -> float:
    """Median µs of one small write + fsync on this disk: the floor under any durable commit."""
    path = directory / "fsync-probe.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    times = []
    try:
        for i in range(n):
            os.pwrite(fd, b"x" * 512, (i % 8) * 4096)
            start = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return median(times) * 1e6


# -- (4) storage growth of one thread --------------------------------------------------------


async def w4_thread(marks: list[int]) -> dict[str, Any]:
    print(f"(4) one thread of {marks[-1]} turns: bytes on disk", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    e, lg = load("eudaimon"), load("langgraph")
    results: dict[str, Any] = {}
    times: dict[str, float] = {}
    for key, fn in (
        ("langgraph", lambda d: _as_async(lg.thread, Thread(), d, marks[-1], marks)),
        ("eudaimon", lambda d: e.thread(Thread(), d, marks[-1], marks)),
    ):
        d = Path(tempfile.mkdtemp(prefix=f"thread-{key}-", dir=OUT))
        try:
            start = time.perf_counter()
            results[key] = await fn(d)
            times[key] = time.perf_counter() - start
        finally:
            shutil.rmtree(d, ignore_errors=True)
    from transcript import fetch_output, thread_answer

    last = marks[-1] - 1
    expected = (thread_answer(last, fetch_output(last)), marks[-1])
    check(
        f"thread of {marks[-1]} turns (last answer, tool results in the thread)",
        {k: v["outcome"] for k, v in results.items()},
        expected,
    )
    out: dict[str, Any] = {"marks": marks, "payload": {m: Thread.payload_bytes(m) for m in marks}, "rows": {}}
    for key, res in results.items():
        sizes = res["sizes"]
        xs = [math.log(m) for m in marks]
        ys = [math.log(sizes[m]["file"]) for m in marks]
        out["rows"][key] = {
            "sizes": sizes,
            "exponent": _slope(xs, ys),
            "exponent_used": _slope(xs, [math.log(sizes[m]["used"]) for m in marks]),
            "by_type": res["by_type"],
            "seconds": times[key],
        }
        print(
            f"    {key}: "
            + ", ".join(f"{m}: {sizes[m]['file']:,} B" for m in marks)
            + f"; exponent {out['rows'][key]['exponent']:.2f}; {times[key]:.1f} s",
            flush=True,
        )
    return out


def _slope(xs: list[float], ys: list[float]) -> float:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


# -- (5) many concurrent runs in one process ---------------------------------------------------


def w5_concurrency(ns: list[int], latency_s: float, timeout_s: float) -> dict[str, Any]:
    """Each (framework, N) in a fresh subprocess, so RSS and the heap belong to that run alone."""
    print(f"(5) concurrent runs with {latency_s * 1000:.0f} ms model latency", flush=True)
    out: dict[str, Any] = {"latency_ms": latency_s * 1000, "rows": {}}
    for n in ns:
        for fw in rotate(list(FRAMEWORKS), ns.index(n)):
            cmd = [sys.executable, str(HERE / "runner.py"), "conc", fw, str(n), str(latency_s)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=HERE)
            except subprocess.TimeoutExpired:
                out["rows"][f"{fw}:{n}"] = {"fw": fw, "n": n, "error": f"timed out after {timeout_s:.0f} s"}
                print(f"    {fw} N={n}: timed out", flush=True)
                continue
            if proc.returncode != 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                out["rows"][f"{fw}:{n}"] = {"fw": fw, "n": n, "error": " / ".join(tail)}
                print(f"    {fw} N={n}: failed: {tail}", flush=True)
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            out["rows"][f"{fw}:{n}"] = row
            print(
                f"    {fw} N={n}: {row['seconds']:.2f} s, {row['peak_kib_per_run']:.1f} KiB/run peak, "
                f"lag max {row['lag_max_ms']:.0f} ms avg {row['lag_avg_ms']:.1f} ms  [check] {row['check']}",
                flush=True,
            )
    return out


async def _conc_worker(fw: str, n: int, latency_s: float) -> dict[str, Any]:
    mod = load(fw)
    t = PerRun()
    agent = mod.make(t, latency_s=latency_s)
    for i in range(3):  # warm up every lazy import and cache
        await mod.run(agent, PerRun.question_for(10**9 + i))
    gc.collect()
    rss0 = vm_rss_kib()
    lag = LoopLag()
    lag.start()
    await asyncio.sleep(0.05)
    start = time.perf_counter()
    run = getattr(mod, "run_concurrent", mod.run)
    outcomes = await asyncio.gather(*(run(agent, PerRun.question_for(i)) for i in range(n)))
    seconds = time.perf_counter() - start
    await lag.stop()
    hwm = vm_hwm_kib()
    gc.collect()
    rss1 = vm_rss_kib()
    wrong = [i for i, o in enumerate(outcomes) if (o.final, o.tool_calls) != (PerRun.expected_for(i), 1)]
    if wrong:
        raise AssertionError(f"{fw}: {len(wrong)} runs answered wrongly, first {wrong[0]}: {outcomes[wrong[0]]}")
    lags = sorted(lag.lags)
    return {
        "fw": fw,
        "n": n,
        "seconds": seconds,
        "rss_before_kib": rss0,
        "rss_peak_kib": max(hwm, lag.peak_rss_kib),
        "rss_after_kib": rss1,
        "peak_kib_per_run": (max(hwm, lag.peak_rss_kib) - rss0) / n,
        "retained_kib_per_run": (rss1 - rss0) / n,
        "lag_max_ms": lags[-1] * 1e3,
        "lag_avg_ms": statistics.fmean(lags) * 1e3,
        "lag_p99_ms": lags[min(len(lags) - 1, int(len(lags) * 0.99))] * 1e3,
        "ticks": len(lags),
        "check": f"{n} runs, each final == 'done: r<i>' with 1 tool call: OK",
    }


if __name__ == "__main__":
    # Subprocess entry for workload 5: runner.py conc FRAMEWORK N LATENCY_S
    if len(sys.argv) == 5 and sys.argv[1] == "conc":
        sys.path.insert(0, str(HERE))
        result = asyncio.run(_conc_worker(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
        print(json.dumps(result))
    else:
        raise SystemExit("usage: runner.py conc FRAMEWORK N LATENCY_S (run benchmarks/compare.py instead)")
