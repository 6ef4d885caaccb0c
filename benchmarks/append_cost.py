"""What an append costs on SQLite, per source tree: the run index (issue 27) adds a row update to
every append; how much CPU and wall time does it add?

For each `--src` tree, in a fresh subprocess: `--runs` runs (each on a thread of its own) append
`--steps` steps at once on one `SqliteStore` (`synchronous=full`), a step being two appends of
two events (an attempt and a model call asking for a tool; the tool's start and result), then a
final `run_completed`. Reported: process CPU (all threads, the commit worker included) and wall
time per append, medians over `--rounds` rounds, the trees alternating within each round.

    .venv/bin/python benchmarks/append_cost.py [--src src ../main/src] [--runs 200] [--steps 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import asyncio, json, sys, tempfile, time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from eudaimon.core.events import Event, ModelAttemptStarted, ModelCalled, RunCompleted, RunStarted, ToolCompleted, ToolStarted
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.stores.sqlite import SqliteStore

async def main(runs, steps):
    store = SqliteStore(Path(tempfile.mkdtemp()) / "runs.db")
    t0 = datetime.now(UTC)
    appends = 0

    async def one(r):
        nonlocal appends
        run, seq, at = f"run-{r}", 0, t0
        def ev(data):
            nonlocal seq, at
            at += timedelta(milliseconds=5)
            seq += 1
            return Event.of(run, seq - 1, at, data)
        start = RunStarted(agent="bench", input=f"input {r}", messages=(Message.user("hi"),), thread_id=f"t{r}")
        await store.append(run, 0, [ev(start)])
        for s in range(steps):
            call = ToolCall(f"c{s}", "lookup", {"k": s})
            asked = Message.assistant("", tool_calls=[call])
            batch = [ev(ModelAttemptStarted(step=s, request_id=f"q{s}", request_digest="")),
                     ev(ModelCalled(step=s, request_id=f"q{s}", message=asked, usage=Usage(9, 9)))]
            await store.append(run, batch[0].seq, batch)
            batch = [ev(ToolStarted(call_id=call.id, tool="lookup", idempotency_key="k")),
                     ev(ToolCompleted(call_id=call.id, tool="lookup", output="ok"))]
            await store.append(run, batch[0].seq, batch)
            appends += 2
        await store.append(run, seq, [ev(RunCompleted(output="done"))])
        appends += 2

    await store.list_runs(limit=1)
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(r) for r in range(runs)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await store.close()
    print(json.dumps({"cpu_us": cpu / appends * 1e6, "wall_us": wall / appends * 1e6, "appends": appends}))

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", nargs="+", default=[str(ROOT / "src")])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {src: [] for src in args.src}
    for round_ in range(args.rounds):
        for src in args.src if round_ % 2 == 0 else list(reversed(args.src)):
            env = {**os.environ, "PYTHONPATH": src}
            cmd = [sys.executable, "-c", _CHILD, str(args.runs), str(args.steps)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            results[src].append(json.loads(out.strip().splitlines()[-1]))
            print(src, results[src][-1], flush=True)
    print(f"\n{args.runs} runs x {args.steps} steps at once, SQLite synchronous=full, medians of {args.rounds}")
    print("| tree | CPU µs per append | wall µs per append |")
    print("|---|---:|---:|")
    for src, rows in results.items():
        cpu = statistics.median(r["cpu_us"] for r in rows)
        wall = statistics.median(r["wall_us"] for r in rows)
        print(f"| {src} | {cpu:.0f} | {wall:.0f} |")


if __name__ == "__main__":
    main()
