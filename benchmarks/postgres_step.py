"""Per-step cost of a K-step tool loop on PostgresStore, against SqliteStore (and MemoryStore).

One step is one model answer asking for one async READ tool, the tool's run, and the journal
appends around them (DESIGN §2: about two commits a step). The model is a `ScriptedModel`, so
what is measured is eudaimon's own work plus the journal; MemoryStore is the no-I/O baseline,
and a store's cost per step is roughly its column minus memory's.

    .venv/bin/python benchmarks/postgres_step.py [--steps 10,100,1000] [--repeat 3]
        [--dsn postgresql://postgres@127.0.0.1:5432/postgres]   (default: $EUDAIMON_TEST_PG_DSN)

SQLite runs with its default `synchronous=FULL` (an fsync per commit) in a temporary directory;
PostgreSQL in a throwaway schema, dropped at the end. Each figure is the median of `--repeat`
runs, after a warm-up run that opens the pool and creates the schema.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psycopg

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.stores import EventStore, MemoryStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

DEFAULT_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@tool(effect="read")
async def lookup(i: int) -> str:
    """Look an item up."""
    return f"item {i}"


def script(steps: int) -> list[Message | str]:
    calls: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"c{i}", "lookup", {"i": i})]) for i in range(steps)
    ]
    return [*calls, "done"]


async def one_run(store: EventStore, steps: int) -> tuple[float, int]:
    """Seconds for a run of `steps` tool steps, and the commits it cost (if the store counts them)."""
    agent = Agent(ScriptedModel(script(steps)), tools=[lookup], store=store, max_iterations=steps + 1)
    before = getattr(store, "commit_count", 0)
    started = time.perf_counter()
    response = await agent.prompt("go")
    elapsed = time.perf_counter() - started
    assert response.status == "completed" and response.iterations == steps + 1, response.status
    return elapsed, getattr(store, "commit_count", 0) - before


async def measure(make: Callable[[], EventStore], steps: int, repeat: int) -> tuple[float, float]:
    """Median µs per step and commits per step over `repeat` runs of `steps` steps, one store."""
    store = make()
    try:
        await one_run(store, 5)  # warm-up: pool, schema, imports
        timings, commits = [], []
        for _ in range(repeat):
            seconds, count = await one_run(store, steps)
            timings.append(seconds / steps * 1e6)
            commits.append(count / steps)
        return statistics.median(timings), statistics.median(commits)
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", default="10,100,1000", help="comma-separated K values")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    args = parser.parse_args()
    sizes = [int(k) for k in args.steps.split(",")]
    schema = f"eudaimon_bench_{uuid.uuid4().hex[:12]}"
    print("$ " + shlex.join([".venv/bin/python", "benchmarks/postgres_step.py", *sys.argv[1:]]))
    print(f"PostgreSQL: {PostgresStore(args.dsn, schema=schema)!r}; SQLite: synchronous=FULL, temp dir\n")
    header = "| K | memory µs/step | sqlite µs/step | sqlite commits/step | postgres µs/step | postgres commits/step |"
    print(header)
    print("|" + "|".join("-" * (len(cell) + 2) for cell in header.strip("| ").split(" | ")) + "|")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for k in sizes:
                memory, _ = await measure(MemoryStore, k, args.repeat)
                sqlite, sqlite_commits = await measure(partial(SqliteStore, Path(tmp) / f"k{k}.db"), k, args.repeat)
                postgres, pg_commits = await measure(partial(PostgresStore, args.dsn, schema=schema), k, args.repeat)
                print(
                    f"| {k} | {memory:,.0f} | {sqlite:,.0f} | {sqlite_commits:.2f} | {postgres:,.0f} | {pg_commits:.2f} |"
                )
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    asyncio.run(main())
