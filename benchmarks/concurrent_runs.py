"""Many concurrent durable runs in one process on SQLite: does a step's cost grow with the load?

N runs start at once through `Agent.prompt` on one `SqliteStore` (a temp file, `synchronous=full`),
each on a thread of its own. Each run is two steps: the model (a `FunctionModel` that sleeps
`--latency-ms`, as a remote model would) asks for one READ tool call, then answers. Each N runs
in a fresh subprocess, so caches, the heap and the store belong to that N alone.

Reported per N: wall time; process CPU per step (user + system, all threads: the SQLite worker
included) and wall per step; lease renewals per second (leases renewed, in bulk or alone, over
the wall time; `--ttl-s` is short so that renewals happen while the runs are in flight);
fsynced commits per step (group commit shares one among the runs appending together); the runs
that did not complete (a `LeaseLost` is one). At most `EUDAIMON_MAX_ACTIVE_RUNS` (default 1,000)
runs are driven at once; the rest wait for a slot, holding no lease. Target (issue 14): every run completes, and
CPU per step at the largest N is within `FLAT_RATIO` of the smallest N's.

    .venv/bin/python benchmarks/concurrent_runs.py [--ns 1000 3000 10000] [--latency-ms 50] [--ttl-s 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FLAT_RATIO = 1.5
"""'Does not grow with the load': CPU per step at the largest N over the smallest N's."""
STEPS_PER_RUN = 2


async def _measure(n: int, latency_s: float, path: Path) -> dict[str, Any]:
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ChatRequest, FunctionModel
    from eudaimon.stores.sqlite import SqliteStore

    class CountingStore(SqliteStore):
        """Counts the leases renewed: alone (`acquire_lease` of a lease already held) or in bulk."""

        renewed = 0
        taken = 0

        async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Any:
            self.taken += 1
            return await super().acquire_lease(name, owner, ttl_s)

        async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
            self.renewed += len(leases)
            return await super().renew_leases(leases, ttl_s)

    @tool(effect="read")
    async def lookup(key: str) -> str:
        """Look `key` up.

        Args:
            key: What to look up.
        """
        return f"value of {key}"

    async def model(request: ChatRequest) -> Message:
        await asyncio.sleep(latency_s)
        last = request.messages[-1]
        if last.role.value == "tool":
            return Message.assistant(f"done: {last.content}")
        return Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": last.content})])

    store = CountingStore(path)
    agent = Agent(FunctionModel(model), tools=[lookup], store=store, memory=None)
    for i in range(3):  # warm imports and caches
        await agent.prompt(f"warm-{i}", thread_id=f"warm-{i}")
    taken0, commits0 = store.taken, store.commit_count
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outcomes = await asyncio.gather(
        *(agent.prompt(f"k{i}", thread_id=f"t{i}") for i in range(n)), return_exceptions=True
    )
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    failed = [o for o in outcomes if isinstance(o, BaseException) or o.status != "completed"]
    kinds: dict[str, int] = {}
    for o in failed:
        kind = type(o).__name__ if isinstance(o, BaseException) else str(o.status)
        kinds[kind] = kinds.get(kind, 0) + 1
    steps = n * STEPS_PER_RUN
    await store.close()
    return {
        "n": n,
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_us_per_step": cpu / steps * 1e6,
        "wall_us_per_step": wall / steps * 1e6,
        "renewals_per_s": store.renewed / wall,
        "renewals": store.renewed,
        "leases_taken": store.taken - taken0,
        "commits_per_step": (store.commit_count - commits0) / steps,
        "failed": len(failed),
        "failures": kinds,
    }


def _child(n: int, latency_s: float) -> None:
    with tempfile.TemporaryDirectory(prefix="eudaimon-conc-") as tmp:
        result = asyncio.run(_measure(n, latency_s, Path(tmp) / "runs.db"))
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ns", type=int, nargs="+", default=[1000, 3000, 10000], help="concurrent runs")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the model's latency per call")
    parser.add_argument("--ttl-s", type=float, default=10.0, help="EUDAIMON_LEASE_TTL_S for the runs")
    parser.add_argument("--max-active", type=int, default=None, help="EUDAIMON_MAX_ACTIVE_RUNS (default: eudaimon's)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.latency_ms / 1000)
        return
    env = {**os.environ, "EUDAIMON_LEASE_TTL_S": str(args.ttl_s)}
    if args.max_active is not None:
        env["EUDAIMON_MAX_ACTIVE_RUNS"] = str(args.max_active)
    rows = []
    for n in args.ns:
        cmd = [sys.executable, __file__, "--child", str(n), "--latency-ms", str(args.latency_ms)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            print(f"N={n}: failed: {proc.stderr.strip().splitlines()[-3:]}", flush=True)
            continue
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"  N={n}: {row['wall_s']:.2f} s wall, {row['cpu_us_per_step']:.0f} µs CPU/step, "
            f"{row['renewals_per_s']:.0f} renewals/s, {row['failed']} failed {row['failures'] or ''}",
            flush=True,
        )
    print(f"\nmodel latency {args.latency_ms:g} ms, lease TTL {args.ttl_s:g} s, {STEPS_PER_RUN} steps per run")
    print("| N | wall s | CPU µs/step | wall µs/step | fsynced commits/step | renewals/s | renewals | failed |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']} | {r['wall_s']:.2f} | {r['cpu_us_per_step']:.0f} | {r['wall_us_per_step']:.0f} "
            f"| {r['commits_per_step']:.3f} "
            f"| {r['renewals_per_s']:.0f} | {r['renewals']} | {r['failed']} |"
        )
    if len(rows) >= 2:
        ratio = rows[-1]["cpu_us_per_step"] / rows[0]["cpu_us_per_step"]
        ok = ratio <= FLAT_RATIO and all(r["failed"] == 0 for r in rows)
        print(
            f"\nCPU/step N={rows[-1]['n']} / N={rows[0]['n']}: {ratio:.2f} (≤ {FLAT_RATIO}), "
            f"all runs completed: {all(r['failed'] == 0 for r in rows)} -> {'PASS' if ok else 'MISS'}"
        )


if __name__ == "__main__":
    main()
