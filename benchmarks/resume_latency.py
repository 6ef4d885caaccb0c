"""How long `agent.state(run_id)` and `agent.resume(run_id)` take on a run of N events.

For each store (SQLite file, `synchronous=full`; PostgreSQL at `$EUDAIMON_TEST_PG_DSN`) and each
N (10, 1,000, 10,000), two runs are recorded through the real loop: one `completed`,
one `awaiting_approval` (its last step asks for an IRREVERSIBLE call). A run's steps each call a
batch of READ tools, so a step is about 2 + 2 × batch events; the runtime snapshots the state
every `SNAPSHOT_EVERY` events as it goes, as in production. Each call is timed warm (the
first call is discarded), median of 9, on a store opened for the purpose — first with
the snapshots the runtime wrote, then after `delete_snapshots()` (everything folded from events).

`resume` of a completed run loads its state and returns; `resume` of a run awaiting approval
also takes and gives back the run's lease (two journal writes) and reloads after the lease.

Target: ≤ 50 ms for `state` and `resume` at 10,000 events with snapshots.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import _harness as h

ROUNDS = 1
TARGET_MS = 50.0
BATCH = 8
"""READ calls per step (1 for runs under 100 events): a step is 2 + 2 × BATCH events."""
PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


def script(events: int, ending: str) -> list[Any]:
    """A script whose run has at least `events` events (a few more): steps of lookups, then the
    ending (run_started and the ending's three events make 4; a step of b calls is 2 + 2b events)."""
    from eudaimon import Message, ToolCall

    batch = BATCH if events >= 100 else 1
    steps = -(-max(events - 4, 0) // (2 + 2 * batch))
    turns: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"s{s}c{i}", "lookup", {"i": i}) for i in range(batch)])
        for s in range(steps)
    ]
    if ending == "approval":
        return [*turns, Message.assistant(tool_calls=[ToolCall("pay", "transfer", {"amount": 5})])]
    return [*turns, "done"]


def agent(store: Any, script_: list[Any]) -> Any:
    from eudaimon import Agent, tool
    from eudaimon.models import ScriptedModel

    @tool(effect="read")
    async def lookup(i: int) -> str:
        """Look something up."""
        return f"value {i}"

    @tool(effect="irreversible")
    async def transfer(amount: int) -> str:
        """Move money."""
        return "moved"

    return Agent(ScriptedModel(script_), tools=[lookup, transfer], store=store, max_iterations=len(script_) + 1)


async def record(store: Any, events: int, ending: str) -> tuple[str, int]:
    from eudaimon.core.state import Status

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
    return h.median(samples)


async def store_latencies(name: str, open_store: Callable[[], Any], sizes: list[int], repeats: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    writer = open_store()
    runs: list[tuple[int, str, str]] = []
    try:
        for size in sizes:
            for ending in ("answer", "approval"):
                run_id, count = await record(writer, size, ending)
                runs.append((count, ending, run_id))
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
                row = f"{name}, {status}, {count:,} events, {'with' if snapshots else 'without'} snapshots"
                figures[f"{row} / state() ms"] = state_ms
                figures[f"{row} / resume() ms"] = resume_ms
        finally:
            await store.close()
    return figures


def measure(quick: bool) -> dict[str, Any]:
    import psycopg

    from eudaimon.stores.postgres import PostgresStore
    from eudaimon.stores.sqlite import SqliteStore

    sizes, repeats = ([10, 1000], 3) if quick else ([10, 1_000, 10_000], 9)
    schema = f"eudaimon_bench_{uuid.uuid4().hex[:12]}"
    figures: dict[str, Any] = {"largest": sizes[-1]}
    try:
        with h.scratch("resume-") as tmp:
            path = tmp / "runs.db"
            for name, make in (
                ("SQLite", lambda: SqliteStore(path, synchronous="full")),
                ("PostgreSQL", lambda: PostgresStore(PG_DSN, schema=schema)),
            ):
                h.say(name)
                figures.update(h.run_on_thread(lambda n=name, m=make: store_latencies(n, m, sizes, repeats)))
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    largest = int(f["largest"])
    out = []
    for key, value in f.items():
        if " with snapshots" in key and key.split(", ")[2] in (f"{n:,} events" for n in range(largest, largest + 30)):
            out.append(h.Target(f"{key} ≤ {TARGET_MS:g} ms", value, TARGET_MS, "median of the calls"))
    return out
