"""What one agent step costs eudaimon itself: the runtime and the journal, not the model or tools.

A run of K steps is K-1 model turns that each call one async READ tool, then a final answer,
played by a `ScriptedModel` with zero latency, through `Agent.prompt`. The figure is the run's
wall time / K (median of several repeats), for `MemoryStore` and for `SqliteStore` (a temp file,
`synchronous=full`, so each commit is an fsync); for SQLite also `commit_count / K`.

Targets: in memory ≤ 100 µs per step and flat in K (no per-step work that grows with history);
SQLite ≤ 2 commits per step (DESIGN §2, commit points).

    .venv/bin/python benchmarks/step_overhead.py [--ks 10 100 1000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eudaimon import Agent, Event, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore
from eudaimon.stores.base import EventStore, Fence, Snapshot
from eudaimon.stores.sqlite import SqliteStore

TARGET_MEMORY_US = 100.0
TARGET_COMMITS_PER_STEP = 2.0
FLAT_RATIO = 1.5
"""'Flat in K': the largest K's figure is at most this multiple of the smallest K's."""


@tool(effect="read")
async def echo(i: int) -> int:
    """Return `i`.

    Args:
        i: Any integer.
    """
    return i


def script(k: int) -> list[Message | str]:
    turns: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", "echo", {"i": i})]) for i in range(k - 1)
    ]
    return [*turns, "done"]


class CountingSqliteStore(SqliteStore):
    """A `SqliteStore` that also counts appends (calls to `append`), to set beside its commits."""

    appends = 0

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        self.appends += 1
        await super().append(run_id, expected_seq, events, snapshot, fence=fence)


@dataclass(frozen=True)
class Sample:
    seconds: float
    commits: int | None
    appends: int | None


async def one_run(k: int, store: EventStore) -> Sample:
    agent = Agent(ScriptedModel(script(k)), tools=[echo], store=store, max_iterations=k + 1)
    start = time.perf_counter()
    response = await agent.prompt("go")
    elapsed = time.perf_counter() - start
    if response.status != "completed" or response.iterations != k:
        raise RuntimeError(f"K={k}: run ended {response.status} after {response.iterations} steps")
    commits = store.commit_count if isinstance(store, SqliteStore) else None
    appends = store.appends if isinstance(store, CountingSqliteStore) else None
    await store.close()
    return Sample(elapsed, commits, appends)


def measure(k: int, repeats: int, make_store: Callable[[], EventStore]) -> list[Sample]:
    return [asyncio.run(one_run(k, make_store())) for _ in range(repeats)]


@dataclass(frozen=True)
class Row:
    store: str
    k: int
    us_per_step: float
    us_min: float
    commits_per_step: float | None
    appends_per_step: float | None
    repeats: int


def row(name: str, k: int, samples: list[Sample]) -> Row:
    per_step = [s.seconds / k * 1e6 for s in samples]
    commits = [s.commits / k for s in samples if s.commits is not None]
    appends = [s.appends / k for s in samples if s.appends is not None]
    return Row(
        name,
        k,
        statistics.median(per_step),
        min(per_step),
        max(commits) if commits else None,
        max(appends) if appends else None,
        len(samples),
    )


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"CPU: {cpu}; {os.cpu_count()} logical cores; Python {platform.python_version()} "
        f"({platform.python_implementation()}); {platform.system()} {platform.release()}"
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| store | K | µs/step (median) | µs/step (best) | commits/step | appends/step | repeats |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        commits = f"{r.commits_per_step:.3f}" if r.commits_per_step is not None else "–"
        appends = f"{r.appends_per_step:.3f}" if r.appends_per_step is not None else "–"
        lines.append(
            f"| {r.store} | {r.k} | {r.us_per_step:.1f} | {r.us_min:.1f} | {commits} | {appends} | {r.repeats} |"
        )
    return "\n".join(lines)


def verdicts(rows: list[Row]) -> list[str]:
    out: list[str] = []
    memory = [r for r in rows if r.store == "memory"]
    if memory:
        worst = max(r.us_per_step for r in memory)
        ratio = memory[-1].us_per_step / memory[0].us_per_step
        ok = worst <= TARGET_MEMORY_US
        flat = ratio <= FLAT_RATIO
        out.append(f"memory ≤ {TARGET_MEMORY_US:g} µs/step: {'PASS' if ok else 'MISS'} (worst {worst:.1f} µs)")
        out.append(
            f"memory flat in K (K={memory[-1].k} / K={memory[0].k} ≤ {FLAT_RATIO}): "
            f"{'PASS' if flat else 'MISS'} (ratio {ratio:.2f})"
        )
    sqlite = [r for r in rows if r.store.startswith("sqlite") and r.commits_per_step is not None]
    if sqlite:
        # A run also pays fixed commits (its start, its end); the target is the per-step rate,
        # so it is judged on the longest run, where those are spread thinnest.
        longest = sqlite[-1]
        commits = longest.commits_per_step or 0.0
        ok = commits <= TARGET_COMMITS_PER_STEP
        out.append(
            f"sqlite ≤ {TARGET_COMMITS_PER_STEP:g} commits/step at K={longest.k}: "
            f"{'PASS' if ok else 'MISS'} ({commits:.3f} commits, {longest.appends_per_step or 0.0:.3f} appends per step)"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 100, 1000], help="run lengths in steps")
    parser.add_argument("--repeats", type=int, default=7, help="runs per (store, K); the median is reported")
    parser.add_argument("--sqlite-repeats", type=int, default=3, help="runs per K on SQLite (each fsyncs)")
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args()

    print(machine())
    asyncio.run(one_run(10, MemoryStore()))  # warm up imports, schema compilation, caches
    rows: list[Row] = []
    for k in args.ks:
        rows.append(row("memory", k, measure(k, args.repeats, MemoryStore)))
        print(f"  memory K={k}: {rows[-1].us_per_step:.1f} µs/step", flush=True)
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory(prefix="eudaimon-bench-") as tmp:
            counter = iter(range(1_000_000))

            def fresh_sqlite() -> EventStore:
                return CountingSqliteStore(Path(tmp) / f"runs-{next(counter)}.db", synchronous="full")

            for k in args.ks:
                rows.append(row("sqlite (full)", k, measure(k, args.sqlite_repeats, fresh_sqlite)))
                print(f"  sqlite K={k}: {rows[-1].us_per_step:.1f} µs/step", flush=True)
            print(f"SQLite files in {tmp} ({_filesystem(tmp)})")
    print()
    print(table(rows))
    print()
    for line in verdicts(rows):
        print(line)


def _filesystem(path: str) -> str:
    try:
        best = ("", "?")
        for line in Path("/proc/mounts").read_text().splitlines():
            _, mount, fstype, *_ = line.split()
            if path.startswith(mount) and len(mount) > len(best[0]):
                best = (mount, fstype)
        return f"{best[1]} on {best[0]}"
    except OSError:
        return "filesystem unknown"


if __name__ == "__main__":
    main()
