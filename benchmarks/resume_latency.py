"""How long `agent.state(run_id)` and `agent.resume(run_id)` take on a run of N events.

For each store (SQLite file, `synchronous=full`; PostgreSQL unless `--skip-postgres`) and each
N (default 10, 1,000, 10,000), two runs are recorded through the real loop: one `completed`,
one `awaiting_approval` (its last step asks for an IRREVERSIBLE call). A run's steps each call a
batch of READ tools, so a step is about 2 + 2 × batch events; the runtime snapshots the state
every `SNAPSHOT_EVERY` events as it goes, as in production. Each call is timed warm (the
first call is discarded), median of `--repeats`, on a store opened for the purpose — first with
the snapshots the runtime wrote, then after `delete_snapshots()` (everything folded from events).

`resume` of a completed run loads its state and returns; `resume` of a run awaiting approval
also takes and gives back the run's lease (two journal writes) and reloads after the lease.

Target: ≤ 50 ms for `state` and `resume` at 10,000 events with snapshots.

    .venv/bin/python benchmarks/resume_latency.py [--sizes 10 1000 10000] [--repeats 9] [--skip-postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.state import Status
from eudaimon.models import ScriptedModel
from eudaimon.stores.base import EventStore
from eudaimon.stores.sqlite import SqliteStore

TARGET_MS = 50.0
BATCH = 8
"""READ calls per step (1 for runs under 100 events): a step is 2 + 2 × BATCH events."""
PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@tool(effect="read")
async def lookup(i: int) -> str:
    """Look something up."""
    return f"value {i}"


@tool(effect="irreversible")
async def transfer(amount: int) -> str:
    """Move money."""
    return "moved"


def script(events: int, ending: str) -> list[Message | str]:
    """A script whose run has at least `events` events (a few more): steps of lookups, then the
    ending (run_started and the ending's three events make 4; a step of b calls is 2 + 2b events)."""
    batch = BATCH if events >= 100 else 1
    steps = -(-max(events - 4, 0) // (2 + 2 * batch))
    turns: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"s{s}c{i}", "lookup", {"i": i}) for i in range(batch)])
        for s in range(steps)
    ]
    if ending == "approval":
        return [*turns, Message.assistant(tool_calls=[ToolCall("pay", "transfer", {"amount": 5})])]
    return [*turns, "done"]


def agent(store: EventStore, script_: list[Message | str]) -> Agent:
    return Agent(ScriptedModel(script_), tools=[lookup, transfer], store=store, max_iterations=len(script_) + 1)


async def record(store: EventStore, events: int, ending: str) -> tuple[str, int]:
    response = await agent(store, script(events, ending)).prompt("go")
    expected = Status.COMPLETED if ending == "answer" else Status.AWAITING_APPROVAL
    assert response.status == expected, response.status
    return response.run_id, len(await store.load(response.run_id))


async def timed(call: Callable[[], Awaitable[object]], repeats: int) -> float:
    await call()  # warm: imports, adapters, connections
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


@dataclass
class Row:
    store: str
    events: int
    status: str
    snapshots: bool
    state_ms: float
    resume_ms: float


async def measure(name: str, open_store: Callable[[], EventStore], sizes: list[int], repeats: int) -> list[Row]:
    rows: list[Row] = []
    writer = open_store()
    runs: list[tuple[int, str, str]] = []
    try:
        for size in sizes:
            for ending in ("answer", "approval"):
                start = time.perf_counter()
                run_id, count = await record(writer, size, ending)
                runs.append((count, ending, run_id))
                print(f"  {name}: recorded {count} events ({ending}) in {time.perf_counter() - start:.1f}s", flush=True)
    finally:
        await writer.close()
    for snapshots in (True, False):
        store = open_store()
        try:
            if not snapshots:
                await store.delete_snapshots()
            reader = agent(store, [])
            for count, ending, run_id in runs:
                state_ms = await timed(partial(reader.state, run_id), repeats)
                resume_ms = await timed(partial(reader.resume, run_id), repeats)
                status = "completed" if ending == "answer" else "awaiting_approval"
                rows.append(Row(name, count, status, snapshots, state_ms, resume_ms))
                print(f"  {rows[-1]}", flush=True)
        finally:
            await store.close()
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| store | events | status | snapshots | state() ms | resume() ms |",
        "|---|---:|---|---|---:|---:|",
    ]
    for r in rows:
        snap = "yes" if r.snapshots else "no"
        lines.append(f"| {r.store} | {r.events} | {r.status} | {snap} | {r.state_ms:.2f} | {r.resume_ms:.2f} |")
    return "\n".join(lines)


def verdicts(rows: list[Row]) -> list[str]:
    out = []
    for r in rows:
        if r.snapshots and r.events >= 10_000:
            worst = max(r.state_ms, r.resume_ms)
            ok = "PASS" if worst <= TARGET_MS else "MISS"
            out.append(f"{r.store} {r.status} at {r.events} events ≤ {TARGET_MS:g} ms: {ok} (worst {worst:.1f} ms)")
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1_000, 10_000])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="eudaimon-resume-") as tmp:
        path = Path(tmp) / "runs.db"
        rows += await measure("sqlite", lambda: SqliteStore(path), args.sizes, args.repeats)
    if not args.skip_postgres:
        from eudaimon.stores.postgres import PostgresStore

        schema = f"eudaimon_bench_{uuid.uuid4().hex[:12]}"
        try:
            rows += await measure("postgres", lambda: PostgresStore(PG_DSN, schema=schema), args.sizes, args.repeats)
        finally:
            import psycopg

            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print()
    print(table(rows))
    print()
    for line in verdicts(rows):
        print(line)


if __name__ == "__main__":
    asyncio.run(main())
