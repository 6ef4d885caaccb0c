"""Many concurrent durable runs in one process: does a step's cost grow with the runs in flight?

N runs start at once through `Agent.prompt` on one store, each on a conversation thread of its
own (`thread_id=t<i>`: a shared thread's memory would shorten the runs and flatter the figure).
Each run makes `--calls` model calls (default 6): the model (a `FunctionModel` that sleeps
`--latency-ms`, as a remote model would) asks for one READ tool call `--calls - 1` times, then
answers. Every run's answer and tool count are checked, so every configuration did the same work.
Each (store, N, source tree) runs in a fresh subprocess, so caches, the heap and the store belong
to that configuration alone; with several `--src` trees (e.g. main's and a branch's) the trees
alternate within each round, so their figures are side by side under the same machine load.

Stores: `memory` (`MemoryStore`: the runtime alone) and `sqlite` (`SqliteStore` on a temp file,
`synchronous=full`).

Reported per configuration: wall time (and its ratio to the ideal `calls × latency`); process
CPU per step (user + system, all threads: the SQLite worker included; a step is one model call
and what it asked for); lease renewals (in bulk or alone) per second; fsynced commits per step;
the p99 and max lateness of a 10 ms timer on the same event loop, ticking throughout (what a
server sharing the loop sees); the runs that did not complete (a `LeaseLost` is one). At most
`EUDAIMON_MAX_ACTIVE_RUNS` (default 1,000) runs are driven at once; the rest wait for a slot,
holding no lease.

Targets (issues 14 and 20): every run completes; CPU per step at the largest N within
`FLAT_RATIO` of the smallest N's; 1,000 runs × 6 calls at 50 ms ≤ 0.40 s in memory and ≤ 0.60 s
on SQLite; 10,000 SQLite runs ≤ 10.5 × the time of 1,000; timer p99 lateness ≤ 20 ms.

    .venv/bin/python benchmarks/concurrent_runs.py [--stores memory sqlite] [--ns 1000 10000]
        [--calls 6] [--latency-ms 50] [--ttl-s 10] [--src src ../main/src] [--rounds 1]
        [--profile DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FLAT_RATIO = 1.1
"""'Does not grow with the load': CPU per step at the largest N over the smallest N's."""
TIMER_S = 0.010
"""The period of the timer whose lateness is reported."""
TARGET_WALL_S = {"memory": 0.40, "sqlite": 0.60}
"""Issue 20: 1,000 runs × 6 calls at 50 ms."""
TARGET_SCALE = 10.5
"""Issue 20: 10,000 SQLite runs ≤ this × the time of 1,000."""
TARGET_LATE_MS = 20.0
ROOT = Path(__file__).resolve().parent.parent


class _GcTime:
    """CPU the process spent collecting garbage (all generations; by the collecting thread's
    clock, so a loaded machine does not inflate it), and how often each generation ran."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.runs = [0, 0, 0]
        self.full: list[tuple[float, float]] = []
        """When (`time.monotonic`, the loop's clock) each full collection began and ended."""
        self._began = 0.0
        self._began_at = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began, self._began_at = time.thread_time(), time.monotonic()
        else:
            self.seconds += time.thread_time() - self._began
            self.runs[info["generation"]] += 1
            if info["generation"] == 2:
                self.full.append((self._began_at, time.monotonic()))

    def overlaps(self, start: float, end: float) -> bool:
        """Whether a full collection ran within [start, end]."""
        return any(began < end and ended > start for began, ended in self.full)


class _Ticker:
    """A 10 ms timer on the loop under test: how late each tick fires."""

    def __init__(self) -> None:
        self.late_s: list[float] = []
        self.windows: list[tuple[float, float]] = []
        """Each tick's (due, fired) on the loop's clock."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + TIMER_S
            await asyncio.sleep(TIMER_S)
            fired = loop.time()
            self.late_s.append(max(0.0, fired - due))
            self.windows.append((due, fired))

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _measure(store_kind: str, n: int, calls: int, latency_s: float, path: Path) -> dict[str, Any]:
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ChatRequest, FunctionModel
    from eudaimon.stores import MemoryStore
    from eudaimon.stores.sqlite import SqliteStore

    counts = {"renewed": 0, "renewals": 0}

    def counting(base: type[Any]) -> Any:
        class Counting(base):  # type: ignore[misc, valid-type]
            """Counts the leases renewed in bulk, and the renewing statements."""

            async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
                counts["renewed"] += len(leases)
                counts["renewals"] += 1
                held: list[bool] = await super().renew_leases(leases, ttl_s)
                return held

        return Counting

    store = counting(SqliteStore)(path) if store_kind == "sqlite" else counting(MemoryStore)()

    @tool(effect="read")
    async def lookup(key: str) -> str:
        """Look `key` up.

        Args:
            key: What to look up.
        """
        return f"value of {key}"

    async def model(request: ChatRequest) -> Message:
        await asyncio.sleep(latency_s)
        messages = request.messages
        done = _tool_results(messages)
        if done + 1 >= calls:
            return Message.assistant(f"done: {messages[-1].content}")
        return Message.assistant(tool_calls=[ToolCall(f"c{done}", "lookup", {"key": f"{done}"})])

    agent = Agent(FunctionModel(model), tools=[lookup], store=store, memory=None)
    for i in range(3):  # warm imports and caches
        await agent.prompt(f"warm-{i}", thread_id=f"warm-{i}")
    commits0 = getattr(store, "commit_count", 0)
    ticker = _Ticker()
    ticker.start()
    await asyncio.sleep(0.05)
    gc_time = _GcTime()
    gc.callbacks.append(gc_time)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    expected = f"done: value of {calls - 2}" if calls >= 2 else None

    async def one(i: int) -> str | None:
        """One run, checked as it ends: what went wrong, or None. Only that verdict is kept, so
        the heap (and what the garbage collector walks) holds no finished run's response."""
        try:
            o = await agent.prompt(f"k{i}", thread_id=f"t{i}")
        except Exception as exc:
            return type(exc).__name__
        if o.status != "completed":
            return str(o.status)
        if (expected is not None and o.final_text != expected) or _tool_results(o.messages) != calls - 1:
            return "wrong answer"
        return None

    verdicts = await asyncio.gather(*(one(i) for i in range(n)))
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    gc.callbacks.remove(gc_time)
    await ticker.stop()
    kinds: dict[str, int] = {}
    for kind in verdicts:
        if kind is not None:
            kinds[kind] = kinds.get(kind, 0) + 1
    steps = n * calls
    commits = getattr(store, "commit_count", 0) - commits0
    await store.close()
    late = sorted(ticker.late_s) or [0.0]
    # The ticks no full garbage collection delayed: what the runtime's own scheduling gives a
    # timer, apart from CPython stopping the whole process to collect.
    clear = sorted(
        lateness
        for lateness, (due, fired) in zip(ticker.late_s, ticker.windows, strict=True)
        if not gc_time.overlaps(due, fired)
    ) or [0.0]
    pauses = [ended - began for began, ended in gc_time.full]
    return {
        "store": store_kind,
        "n": n,
        "calls": calls,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_us_per_step": cpu / steps * 1e6,
        "gc_us_per_step": gc_time.seconds / steps * 1e6,
        "gc_runs": gc_time.runs,
        "renewals_per_s": counts["renewed"] / wall,
        "renewed": counts["renewed"],
        "renewing_statements": counts["renewals"],
        "commits_per_step": commits / steps,
        "late_p99_ms": late[min(len(late) - 1, int(len(late) * 0.99))] * 1e3,
        "late_max_ms": late[-1] * 1e3,
        "late_p99_no_gc_ms": clear[min(len(clear) - 1, int(len(clear) * 0.99))] * 1e3,
        "full_gc_max_ms": max(pauses, default=0.0) * 1e3,
        "ticks": len(ticker.late_s),
        "failed": sum(kinds.values()),
        "failures": kinds,
    }


def _tool_results(messages: Sequence[Any]) -> int:
    return sum(1 for m in messages if m.role.value == "tool")


def _child(store_kind: str, n: int, calls: int, latency_s: float, profile: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="eudaimon-conc-") as tmp:
        run = _measure(store_kind, n, calls, latency_s, Path(tmp) / "runs.db")
        if profile:
            import cProfile

            with cProfile.Profile() as prof:
                result = asyncio.run(run)
            prof.dump_stats(profile)
        else:
            result = asyncio.run(run)
    print(json.dumps(result))


def _src_label(src: str) -> str:
    """The tree's branch and commit, for the table."""
    try:
        out = subprocess.run(
            ["git", "-C", src, "log", "-1", "--format=%h"], capture_output=True, text=True, check=True
        ).stdout.strip()
        branch = subprocess.run(
            ["git", "-C", src, "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return f"{branch}@{out}"
    except (OSError, subprocess.CalledProcessError):
        return src


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", nargs="+", default=["memory", "sqlite"], choices=["memory", "sqlite"])
    parser.add_argument("--ns", type=int, nargs="+", default=[1000, 10000], help="concurrent runs")
    parser.add_argument("--calls", type=int, default=6, help="model calls per run (all but the last ask for a tool)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the model's latency per call")
    parser.add_argument("--ttl-s", type=float, default=10.0, help="EUDAIMON_LEASE_TTL_S for the runs")
    parser.add_argument("--max-active", type=int, default=None, help="EUDAIMON_MAX_ACTIVE_RUNS (default: eudaimon's)")
    parser.add_argument("--src", nargs="+", default=[str(ROOT / "src")], help="source trees to compare (PYTHONPATH)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every configuration; medians are reported")
    parser.add_argument("--profile", default=None, help="a directory: cProfile each child there")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        kind, n = args.child
        _child(kind, int(n), args.calls, args.latency_ms / 1000, args.profile)
        return
    base = {**os.environ, "EUDAIMON_LEASE_TTL_S": str(args.ttl_s)}
    if args.max_active is not None:
        base["EUDAIMON_MAX_ACTIVE_RUNS"] = str(args.max_active)
    labels = {src: _src_label(src) for src in args.src}
    results: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for kind in args.stores:
            for n in args.ns:
                order = args.src if round_ % 2 == 0 else list(reversed(args.src))
                for src in order:
                    env = {**base, "PYTHONPATH": src}
                    cmd = [sys.executable, __file__, "--child", kind, str(n)]
                    cmd += ["--calls", str(args.calls), "--latency-ms", str(args.latency_ms)]
                    if args.profile:
                        Path(args.profile).mkdir(parents=True, exist_ok=True)
                        name = f"{kind}-{n}-{labels[src].replace('/', '_')}-{round_}.prof"
                        cmd += ["--profile", str(Path(args.profile) / name)]
                    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                    if proc.returncode != 0:
                        print(f"{kind} N={n} {labels[src]}: failed: {proc.stderr.strip().splitlines()[-3:]}")
                        continue
                    row = json.loads(proc.stdout.strip().splitlines()[-1])
                    results.setdefault((kind, n, src), []).append(row)
                    print(
                        f"  {kind} N={n} {labels[src]}: {row['wall_s']:.2f} s, {row['cpu_us_per_step']:.0f} µs "
                        f"CPU/step (GC {row['gc_us_per_step']:.0f}), timer p99 {row['late_p99_ms']:.1f} ms "
                        f"({row['late_p99_no_gc_ms']:.1f} ms without full-GC ticks; longest full GC "
                        f"{row['full_gc_max_ms']:.1f} ms), "
                        f"{row['failed']} failed "
                        f"{row['failures'] or ''}",
                        flush=True,
                    )
    _report(args, labels, results)


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _report(args: Any, labels: dict[str, str], results: dict[tuple[str, int, str], list[dict[str, Any]]]) -> None:
    ideal = args.calls * args.latency_ms / 1000
    print(
        f"\n{args.calls} model calls per run at {args.latency_ms:g} ms (ideal {ideal:.2f} s per run), lease TTL "
        f"{args.ttl_s:g} s, EUDAIMON_MAX_ACTIVE_RUNS {args.max_active or 'default'}, medians of {args.rounds} round(s)"
    )
    print(
        "| store | N | tree | wall s | ÷ ideal | CPU µs/step | of which GC | fsynced commits/step | renewals/s "
        "| renewing statements | timer p99 ms | timer max ms | p99 without full-GC ticks | longest full GC ms "
        "| failed |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (kind, n, src), rows in results.items():
        print(
            f"| {kind} | {n} | {labels[src]} | {_median(rows, 'wall_s'):.2f} | {_median(rows, 'wall_s') / ideal:.2f} "
            f"| {_median(rows, 'cpu_us_per_step'):.0f} | {_median(rows, 'gc_us_per_step'):.0f} "
            f"| {_median(rows, 'commits_per_step'):.3f} "
            f"| {_median(rows, 'renewals_per_s'):.0f} | {_median(rows, 'renewing_statements'):.0f} "
            f"| {_median(rows, 'late_p99_ms'):.1f} | {_median(rows, 'late_max_ms'):.0f} "
            f"| {_median(rows, 'late_p99_no_gc_ms'):.1f} | {_median(rows, 'full_gc_max_ms'):.1f} "
            f"| {sum(r['failed'] for r in rows)} |"
        )
    print()
    for src in args.src:
        for kind in args.stores:
            got = {n: results[(kind, n, src)] for n in args.ns if (kind, n, src) in results}
            if not got:
                continue
            small, large = min(got), max(got)
            verdicts = []
            if large != small:
                ratio = _median(got[large], "cpu_us_per_step") / _median(got[small], "cpu_us_per_step")
                verdicts.append(f"CPU/step N={large} ÷ N={small} {ratio:.2f} (≤ {FLAT_RATIO})")
                scale = _median(got[large], "wall_s") / _median(got[small], "wall_s")
                if kind == "sqlite":
                    verdicts.append(f"wall N={large} ÷ N={small} {scale:.2f} (≤ {TARGET_SCALE})")
            if 1000 in got and args.calls == 6 and args.latency_ms == 50:
                verdicts.append(f"wall N=1000 {_median(got[1000], 'wall_s'):.2f} s (≤ {TARGET_WALL_S[kind]})")
            worst = max(_median(rows, "late_p99_ms") for rows in got.values())
            verdicts.append(f"worst timer p99 {worst:.1f} ms (≤ {TARGET_LATE_MS:g})")
            complete = all(r["failed"] == 0 for rows in got.values() for r in rows)
            verdicts.append(f"all runs completed: {complete}")
            print(f"{labels[src]} {kind}: " + "; ".join(verdicts))


if __name__ == "__main__":
    main()
