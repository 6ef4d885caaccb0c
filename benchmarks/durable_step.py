"""What a durable SQLite step costs, in units of the disk's own durable commit (issue 20).

Three workloads, measured in rounds that alternate them, each run on a thread of its own:

- **one durable commit**: a bare `sqlite3` connection on a file in the same directory, WAL,
  `synchronous=FULL`, committing one small row at a time (`INSERT` + `COMMIT`, an fsync each);
  the median commit is the unit.
- **all-READ loop**: a run of K steps through `Agent.prompt` on a `SqliteStore`
  (`synchronous="full"`): K-1 model turns that each call one READ tool, then a final answer,
  played by a `ScriptedModel` with zero latency. The figure is the run's wall time / K.
- **WRITE loop**: the same with a WRITE tool (not idempotent), whose intent must be durable
  before it runs.

Each loop is checked to have done the same work: completed after K steps, with the tool
executed K-1 times. Reported: µs per step, commits and appends per step (`commit_count`,
`append` calls), and each step's time as a multiple of one durable commit: per round, the step
over the mean of the commits measured just before and just after its loop; the median of rounds.

Targets (issue 20): all-READ step ≤ 1.3 × one durable commit; WRITE step ≤ 2.3 ×.

    .venv/bin/python benchmarks/durable_step.py [--k 100] [--rounds 7] [--dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from step_overhead import CountingSqliteStore  # benchmarks/ is on the path: the script's folder

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel

TARGET_READ = 1.3
TARGET_WRITE = 2.3
BARE_COMMITS = 60
"""Commits timed per round for the unit."""

T = TypeVar("T")

executed = {"look": 0, "save": 0}


@tool(effect="read")
async def look(i: int) -> int:
    """Read item `i`.

    Args:
        i: Any integer.
    """
    executed["look"] += 1
    return i


@tool(effect="write")
async def save(i: int) -> int:
    """Save item `i` (a write that must not happen twice).

    Args:
        i: Any integer.
    """
    executed["save"] += 1
    return i


def in_own_thread(work: Callable[[], T]) -> T:
    """Run `work` on a fresh thread: no run inherits another's memory or loop."""
    box: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            box.append(work())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return box[0]


def bare_commits(path: Path, n: int) -> float:
    """Median µs of one durable commit of a small row, on a fresh WAL file."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        times: list[float] = []
        for i in range(n):
            start = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t (v) VALUES (?)", (f"row {i} " + "x" * 64,))
            conn.execute("COMMIT")
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e6
    finally:
        conn.close()


def script(k: int, tool_name: str) -> list[Message | str]:
    turns: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", tool_name, {"i": i})]) for i in range(k - 1)
    ]
    return [*turns, "done"]


@dataclass(frozen=True)
class Loop:
    us_per_step: float
    commits_per_step: float
    appends_per_step: float


async def one_loop(path: Path, k: int, tool_name: str) -> Loop:
    store = CountingSqliteStore(path, synchronous="full")
    await store.list_runs(limit=1)  # open the file (schema, WAL room) outside the timing
    tools = {"look": look, "save": save}
    agent = Agent(ScriptedModel(script(k, tool_name)), tools=[tools[tool_name]], store=store, max_iterations=k + 1)
    before, commits_before, appends_before = executed[tool_name], store.commit_count, store.appends
    start = time.perf_counter()
    response = await agent.prompt("go")
    elapsed = time.perf_counter() - start
    commits, appends = store.commit_count - commits_before, store.appends - appends_before
    await store.close()
    if response.status != "completed" or response.iterations != k or executed[tool_name] - before != k - 1:
        raise RuntimeError(
            f"{tool_name} loop: ended {response.status} after {response.iterations} steps, "
            f"{executed[tool_name] - before} tool runs; expected completed, {k}, {k - 1}"
        )
    return Loop(elapsed / k * 1e6, commits / k, appends / k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=100, help="steps per run")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of (commit, READ loop, WRITE loop)")
    parser.add_argument("--dir", type=Path, default=None, help="where the SQLite files go (default: a temp dir)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="eudaimon-durable-", dir=args.dir) as tmp:
        root = Path(tmp)
        counter = iter(range(1_000_000))

        def fresh(name: str) -> Path:
            return root / f"{name}-{next(counter)}.db"

        in_own_thread(lambda: asyncio.run(one_loop(fresh("warm"), 10, "look")))  # imports, caches
        commit_us: list[float] = []
        reads: list[Loop] = []
        writes: list[Loop] = []
        read_ratios: list[float] = []
        write_ratios: list[float] = []

        def bare() -> float:
            return in_own_thread(lambda: bare_commits(fresh("bare"), BARE_COMMITS))

        for r in range(args.rounds):
            # The unit is taken right around each loop, so a disk that others load unevenly
            # (a shared machine) weighs on both sides of a round's ratio alike.
            before = bare()
            reads.append(in_own_thread(lambda: asyncio.run(one_loop(fresh("read"), args.k, "look"))))
            between = bare()
            writes.append(in_own_thread(lambda: asyncio.run(one_loop(fresh("write"), args.k, "save"))))
            after = bare()
            commit_us += [before, between, after]
            read_ratios.append(reads[-1].us_per_step / statistics.mean((before, between)))
            write_ratios.append(writes[-1].us_per_step / statistics.mean((between, after)))
            print(
                f"  round {r + 1}: commits {before:.0f}/{between:.0f}/{after:.0f} µs, "
                f"READ step {reads[-1].us_per_step:.0f} µs ({read_ratios[-1]:.2f} ×), "
                f"WRITE step {writes[-1].us_per_step:.0f} µs ({write_ratios[-1]:.2f} ×)",
                flush=True,
            )
        where = _filesystem(tmp)

    unit = statistics.median(commit_us)
    read_us = statistics.median(loop.us_per_step for loop in reads)
    write_us = statistics.median(loop.us_per_step for loop in writes)
    print(f"\nSQLite files in a temp dir ({where}); K={args.k}; {args.rounds} rounds; pid {os.getpid()}")
    read_ratio, write_ratio = statistics.median(read_ratios), statistics.median(write_ratios)
    print("| workload | µs (median) | × one durable commit (median of rounds) | commits/step | appends/step |")
    print("|---|---:|---:|---:|---:|")
    print(f"| one durable commit (bare sqlite3, WAL, FULL) | {unit:.0f} | 1.00 | – | – |")
    for name, loops, us, ratio in (
        ("all-READ step", reads, read_us, read_ratio),
        ("WRITE step", writes, write_us, write_ratio),
    ):
        print(
            f"| {name} | {us:.0f} | {ratio:.2f} | {max(x.commits_per_step for x in loops):.3f} "
            f"| {max(x.appends_per_step for x in loops):.3f} |"
        )
    print()
    for name, ratio, target in (("all-READ step", read_ratio, TARGET_READ), ("WRITE step", write_ratio, TARGET_WRITE)):
        print(f"{name} ≤ {target} × one durable commit: {'PASS' if ratio <= target else 'MISS'} ({ratio:.2f} ×)")


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
