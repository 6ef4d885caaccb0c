"""How late approval deadlines and durable waits fire, with many runs waiting.

`N_WAITING` runs wait for approval with a deadline far ahead (in the due index, never due) and
as many without one; `N_TIMED` runs get a deadline, and `N_TIMED` a `tool_waiting` wake, spread
over the next `SPREAD_S` seconds. A sweeper does what `eudaimon serve`'s timer sweep does
(`runtime.process.timers`, every `--interval` seconds) and records, per run, when its event was journaled
minus when it was due. Run: `python benchmarks/deadline_lateness.py [--store URL] [--interval S]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from eudaimon.core.events import ApprovalRequested, Event, EventData, ModelCalled, RunStarted, ToolStarted, ToolWaiting
from eudaimon.core.messages import Message, ToolCall
from eudaimon.runtime.process import timers
from eudaimon.stores.base import EventStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.url import open_store

N_WAITING = 1000
N_TIMED = 100
SPREAD_S = 10.0


async def _write(store: EventStore, run_id: str, payloads: list[EventData]) -> None:
    at = datetime.now(UTC)
    await store.append(run_id, 0, [Event.of(run_id, i, at, p) for i, p in enumerate(payloads)])


def _head(run_id: str) -> list[EventData]:
    call = ToolCall("c1", "pay", {"amount": 1})
    return [
        RunStarted(agent="bench", input=run_id, messages=(Message.user(run_id),)),
        ModelCalled(step=0, request_id="r", message=Message.assistant("", tool_calls=[call])),
    ]


async def populate(store: EventStore) -> None:
    far = datetime.now(UTC) + timedelta(days=1)
    for n in range(N_WAITING):
        await _write(store, f"far-{n}", [*_head("x"), ApprovalRequested(call_id="c1", tool="pay", deadline=far)])
        await _write(store, f"none-{n}", [*_head("x"), ApprovalRequested(call_id="c1", tool="pay")])


async def timed(store: EventStore, start: datetime) -> dict[str, datetime]:
    due: dict[str, datetime] = {}
    for n in range(N_TIMED):
        at = start + timedelta(seconds=2 + SPREAD_S * n / N_TIMED)
        due[f"deadline-{n}"] = at
        asked = ApprovalRequested(call_id="c1", tool="pay", deadline=at, timeout_s=60)
        await _write(store, f"deadline-{n}", [*_head("x"), asked])
        due[f"wake-{n}"] = at
        started = ToolStarted(call_id="c1", tool="pay", idempotency_key="k" * 64, attempt=1)
        await _write(
            store, f"wake-{n}", [*_head("x"), started, ToolWaiting(call_id="c1", tool="pay", attempt=1, wake_at=at)]
        )
    return due


async def sweep(store: EventStore, due: dict[str, datetime], interval_s: float) -> dict[str, float]:
    late: dict[str, float] = {}
    deadline = max(due.values()) + timedelta(seconds=10)
    while len(late) < len(due) and datetime.now(UTC) < deadline:
        began = time.monotonic()
        for run_id in await timers.due_runs(store):
            if await timers.fire(store, run_id) is not None and run_id in due:
                late[run_id] = (datetime.now(UTC) - due[run_id]).total_seconds() * 1000
        await asyncio.sleep(max(0.0, interval_s - (time.monotonic() - began)))
    return late


def pct(values: list[float], p: float) -> float:
    ranked = sorted(values)
    return round(ranked[min(len(ranked) - 1, max(0, round(p / 100 * len(ranked)) - 1))], 1)


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": pct(values, 50), "p99": pct(values, 99), "max": round(max(values), 1)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default=None, help="a PostgreSQL DSN (a scratch schema); default: a SQLite file")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between sweeps (the server's 1.0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        schema = f"bench_deadlines_{uuid.uuid4().hex[:10]}"  # a PostgreSQL store gets a scratch schema
        pg = bool(args.store and args.store.startswith("postgres"))
        store = PostgresStore(args.store, schema=schema) if pg else open_store(f"sqlite:///{Path(tmp) / 'runs.db'}")
        try:
            built = time.monotonic()
            await populate(store)
            due = await timed(store, datetime.now(UTC) + timedelta(seconds=20))  # after all are written
            print(f"populated {2 * N_WAITING} waiting + {2 * N_TIMED} timed runs in {time.monotonic() - built:.1f}s")
            late = await sweep(store, due, args.interval)
        finally:
            await store.close()
            if pg:
                async with await psycopg.AsyncConnection.connect(args.store, autocommit=True) as conn:
                    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    kinds = {kind: [v for k, v in late.items() if k.startswith(kind)] for kind in ("deadline", "wake")}
    result = {
        "store": "postgresql" if pg else "sqlite",
        "interval_s": args.interval,
        "waiting_runs": 2 * N_WAITING,
        "fired": len(late),
        **{
            f"{kind}_ms": {"n": len(v), "p50": pct(v, 50), "p99": pct(v, 99), "max": round(max(v), 1)}
            for kind, v in kinds.items()
            if v
        },
    }
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
