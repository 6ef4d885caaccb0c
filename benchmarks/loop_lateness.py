"""Does a durable SQLite journal hold up the event loop it shares? A 10 ms timer's lateness.

A ticker on the loop sleeps 10 ms again and again and records how late each wake-up is (the
time slept minus 10 ms) while, on the same loop and one `SqliteStore` (a temp file,
`synchronous="full"`, so each commit is an fsync):

- (a) `one run`: one durable run at a time, back to back, each `--steps` zero-latency steps (a
  `ScriptedModel` asking for one READ tool call per step): the run never waits for anything
  but its journal, so whatever its commits cost the loop, the ticker sees;
- (b) `N runs`: `--runs` runs at once, each `--calls` model calls of `--latency-ms` (a
  `FunctionModel` that sleeps, as a remote model would), READ tool calls in between.

- (0) `idle`: the ticker alone, for what the machine's own load does to a 10 ms timer.

Reported: the ticker's p50 / p99 / max lateness, the wall µs per step of (a), and the disk's own
cost of one durable commit (a bare SQLite connection, `synchronous=FULL`, one row per COMMIT),
measured in the same run. Target (issue 20): p99 ≤ 20 ms throughout.

Each (tree, scenario) runs in a fresh subprocess with `PYTHONPATH` set to a source tree, so
`--baseline` can set another checkout beside this one (e.g. main before a change), alternated
round by round so that both see the same load:

    PYTHONPATH=src .venv/bin/python benchmarks/loop_lateness.py [--baseline /path/to/main/src]
        [--rounds 2] [--seconds 4] [--runs 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TICK_S = 0.010
TARGET_P99_MS = 20.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _ticker(late: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(TICK_S)
        late.append(time.perf_counter() - start - TICK_S)


async def _one_run(path: Path, steps: int, seconds: float) -> dict[str, Any]:
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ScriptedModel
    from eudaimon.stores.sqlite import SqliteStore

    @tool(effect="read")
    async def echo(i: int) -> int:
        """Return `i`.

        Args:
            i: Any integer.
        """
        return i

    def script() -> list[Message | str]:
        calls = [Message.assistant(tool_calls=[ToolCall(f"c{i}", "echo", {"i": i})]) for i in range(steps - 1)]
        return [*calls, "done"]

    store = SqliteStore(path, synchronous="full")
    warm = Agent(ScriptedModel(script()), tools=[echo], store=store, memory=None, max_iterations=steps + 1)
    await warm.prompt("warm")
    late: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.ensure_future(_ticker(late, stop))
    done_steps, busy = 0, 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        agent = Agent(ScriptedModel(script()), tools=[echo], store=store, memory=None, max_iterations=steps + 1)
        start = time.perf_counter()
        response = await agent.prompt("go")
        busy += time.perf_counter() - start
        if response.status != "completed" or response.iterations != steps:
            raise RuntimeError(f"a run ended {response.status} after {response.iterations} steps")
        done_steps += steps
    stop.set()
    await ticking
    await store.close()
    return {"late": late, "steps": done_steps, "us_per_step": busy / done_steps * 1e6}


async def _many_runs(path: Path, runs: int, calls: int, latency_s: float) -> dict[str, Any]:
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ChatRequest, FunctionModel
    from eudaimon.stores.sqlite import SqliteStore

    @tool(effect="read")
    async def lookup(key: str) -> str:
        """Look `key` up.

        Args:
            key: What to look up.
        """
        return f"value of {key}"

    async def model(request: ChatRequest) -> Message:
        await asyncio.sleep(latency_s)
        answered = sum(1 for m in request.messages if m.role.value == "tool")
        if answered + 1 >= calls:
            return Message.assistant("done")
        return Message.assistant(tool_calls=[ToolCall(f"c{answered}", "lookup", {"key": str(answered)})])

    store = SqliteStore(path, synchronous="full")
    agent = Agent(FunctionModel(model), tools=[lookup], store=store, memory=None, max_iterations=calls + 1)
    await agent.prompt("warm", thread_id="warm")
    late: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.ensure_future(_ticker(late, stop))
    start = time.perf_counter()
    outcomes = await asyncio.gather(*(agent.prompt(f"k{i}", thread_id=f"t{i}") for i in range(runs)))
    wall = time.perf_counter() - start
    stop.set()
    await ticking
    await store.close()
    wrong = [o for o in outcomes if o.status != "completed" or o.iterations != calls]
    if wrong:
        raise RuntimeError(f"{len(wrong)} of {runs} runs did not complete {calls} calls")
    return {"late": late, "wall_s": wall}


async def _idle(seconds: float) -> dict[str, Any]:
    """The ticker alone: what the machine's load makes of a 10 ms timer with no work on the loop."""
    late: list[float] = []
    stop = asyncio.Event()
    ticking = asyncio.ensure_future(_ticker(late, stop))
    await asyncio.sleep(seconds)
    stop.set()
    await ticking
    return {"late": late}


def _commit_us(path: Path, commits: int = 200) -> float:
    """The disk's cost of one durable commit: a bare connection, one small row per COMMIT."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE t (x)")
        times = []
        for i in range(commits):
            start = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?)", (i,))
            conn.execute("COMMIT")
            times.append(time.perf_counter() - start)
    finally:
        conn.close()
    return statistics.median(times) * 1e6


def _child(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="eudaimon-lateness-") as tmp:
        path = Path(tmp) / "runs.db"
        if args.child == "idle":
            result = asyncio.run(_idle(args.seconds))
        elif args.child == "one":
            result = asyncio.run(_one_run(path, args.steps, args.seconds))
        else:
            result = asyncio.run(_many_runs(path, args.runs, args.calls, args.latency_ms / 1000))
        result["commit_us"] = _commit_us(Path(tmp) / "bare.db")
    late_ms = [x * 1000 for x in result.pop("late")]
    result.update(
        ticks=len(late_ms),
        p50_ms=_percentile(late_ms, 0.50),
        p99_ms=_percentile(late_ms, 0.99),
        max_ms=max(late_ms),
    )
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=None, help="another source tree to measure beside this one")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; each runs every (tree, scenario) once")
    parser.add_argument("--seconds", type=float, default=4.0, help="(a): how long one run after another goes on")
    parser.add_argument("--steps", type=int, default=50, help="(a): steps per run")
    parser.add_argument("--runs", type=int, default=1000, help="(b): runs at once")
    parser.add_argument("--calls", type=int, default=6, help="(b): model calls per run")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="(b): the model's latency per call")
    parser.add_argument("--child", choices=["idle", "one", "many"], default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args)
        return

    here = str(Path(__file__).resolve().parent.parent / "src")
    trees = [("this tree", os.environ.get("PYTHONPATH") or here)]
    if args.baseline:
        trees.insert(0, ("baseline", args.baseline))
    forwarded = [
        *("--seconds", str(args.seconds), "--steps", str(args.steps), "--runs", str(args.runs)),
        *("--calls", str(args.calls), "--latency-ms", str(args.latency_ms)),
    ]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for scenario in ("idle", "one", "many"):
            for label, tree in trees[: 1 if scenario == "idle" else None]:
                env = {**os.environ, "PYTHONPATH": tree}
                cmd = [sys.executable, __file__, "--child", scenario, *forwarded]
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                if proc.returncode != 0:
                    print(f"{label} {scenario}: failed: {proc.stderr.strip().splitlines()[-3:]}", flush=True)
                    continue
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                results.setdefault((label, scenario), []).append(row)
                print(f"  round {round_ + 1} {label:9} {scenario}: p99 {row['p99_ms']:.1f} ms", flush=True)

    names = {
        "idle": "(0) the ticker alone: the machine's noise",
        "one": "(a) one run, zero latency",
        "many": f"(b) {args.runs} runs × {args.calls} calls at {args.latency_ms:g} ms",
    }
    print("\n| scenario | tree | p50 ms | p99 ms | max ms | ticks | µs/step (a) / wall s (b) | durable commit µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    verdicts = []
    for scenario in ("idle", "one", "many"):
        for label, tree in trees:
            rows = results.get((label, scenario), [])
            if not rows:
                continue
            worst = max(rows, key=lambda r: r["p99_ms"])
            work = (
                f"{statistics.median(r['us_per_step'] for r in rows):.0f}"
                if scenario == "one"
                else f"{statistics.median(r['wall_s'] for r in rows):.2f}"
                if scenario == "many"
                else "–"
            )
            print(
                f"| {names[scenario]} | {label} ({tree}) | {statistics.median(r['p50_ms'] for r in rows):.2f} "
                f"| {worst['p99_ms']:.2f} | {max(r['max_ms'] for r in rows):.1f} | {sum(r['ticks'] for r in rows)} "
                f"| {work} | {statistics.median(r['commit_us'] for r in rows):.0f} |"
            )
            if label == "this tree" and scenario != "idle":
                verdicts.append((names[scenario], worst["p99_ms"]))
    print("\np99 is the worst round's; p50, µs/step, wall and commit µs are medians over rounds.")
    for name, p99 in verdicts:
        print(f"{name}: p99 {p99:.1f} ms (≤ {TARGET_P99_MS:g}) -> {'PASS' if p99 <= TARGET_P99_MS else 'MISS'}")


if __name__ == "__main__":
    main()
