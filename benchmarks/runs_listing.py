"""`GET /v1/runs?status=awaiting_approval` and `GET /v1/dashboard` against a real server as the store grows.

For each store (SQLite; PostgreSQL at `$EUDAIMON_TEST_PG_DSN`, a database of its own, dropped
after) and each N (300, 3,000), the tree's own store is filled with N runs waiting for approval
and N completed, each on a conversation thread of its own, then a real `eudaimon serve`
(uvicorn, the agents of `tests/server/_server_agents.py`) is started on it and asked, from one
client thread: 30 sequential `GET /v1/runs?status=awaiting_approval&limit=50` (p50, p99), then
ten at once (the wall time until the last answer); and, with 10,000 runs in the store, 30
`GET /v1/dashboard`. Every answer is checked (status 200, 50 runs, all awaiting approval):
listing by status must not cost a fold of every run not yet ended.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
sys.path.insert(0, str(h.REPO / "tests" / "server"))

_POPULATE = """
import asyncio, sys
from datetime import UTC, datetime, timedelta
from eudaimon.core.events import ApprovalRequested, Event, ModelCalled, RunCompleted, RunStarted
from eudaimon.core.messages import Message, ToolCall
from eudaimon.stores.sqlite import SqliteStore

async def main(path, waiting, ended):
    if path.startswith("postgresql://"):
        from eudaimon.stores.postgres import PostgresStore
        store = PostgresStore(path, max_size=20)
    else:
        store = SqliteStore(path, synchronous="normal")
    t0 = datetime.now(UTC) - timedelta(days=3)
    call = ToolCall("wire_1", "send_wire", {"amount_usd": 5.0, "to": "ACME"})

    async def one(i, wait):
        run = f"run-{i:06}"
        at = t0 + timedelta(seconds=20 * i)
        start = RunStarted(agent="payer", input=f"pay 5 to ACME #{i}", messages=(Message.user("pay"),), thread_id=f"t{i}")
        asked = ModelCalled(step=0, request_id="r0", message=Message.assistant("", tool_calls=[call]), cost_usd=0.01)
        tail = ApprovalRequested(call_id="wire_1", tool="send_wire") if wait else RunCompleted(output="done")
        await store.append(run, 0, [Event.of(run, n, at + timedelta(milliseconds=300 * n), p)
                                    for n, p in enumerate([start, asked, tail])])

    total, step = waiting + ended, 2000 if isinstance(store, SqliteStore) else 50
    for at in range(0, total, step):  # PostgreSQL: no more appends at once than its pool serves soon
        await asyncio.gather(*(one(i, i < waiting) for i in range(at, min(at + step, total))))
    await store.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""


def populate(path: Path | str, waiting: int, ended: int) -> None:
    """Fill the store in a process of the tree's own (its store writes what it reads back)."""
    subprocess.run([sys.executable, "-c", _POPULATE, str(path), str(waiting), str(ended)], check=True)


def serve(db: Path, store_url: str | None = None) -> Any:
    from _server_support import Server

    server = Server(db)
    if store_url is not None:  # the command's `--store sqlite:///…` replaced by the database's URL
        command = server.command()
        at = command.index("--store")
        command[at + 1] = store_url
        server.command = lambda: command  # type: ignore[method-assign]
    return server.start()


class Database:
    """A PostgreSQL database of the benchmark's own (the store's default schema in it), dropped after."""

    def __init__(self, dsn: str, name: str) -> None:
        import psycopg

        self._admin, self.name = dsn, name
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        self.url = dsn.rsplit("/", 1)[0] + "/" + name

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self._admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


async def listing(url: str, reads: int) -> dict[str, float]:
    """Sequential reads, then a burst of ten at once; each answer checked."""
    import httpx2

    query = "/v1/runs?status=awaiting_approval&limit=50"
    async with httpx2.AsyncClient(base_url=url, timeout=600) as client:

        async def one() -> float:
            began = time.perf_counter()
            answer = await client.get(query)
            took = time.perf_counter() - began
            body = answer.json()
            assert answer.status_code == 200, answer.text
            assert len(body["runs"]) == 50 and all(r["status"] == "awaiting_approval" for r in body["runs"])
            return took * 1000

        await one()  # warm
        times = [await one() for _ in range(reads)]
        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(10)))
        burst = (time.perf_counter() - began) * 1000
    return {"p50 ms": h.median(times), "p99 ms": h.percentile(times, 0.99), "ten at once ms": burst}


async def dashboard(url: str, reads: int) -> dict[str, float]:
    import httpx2

    async with httpx2.AsyncClient(base_url=url, timeout=600) as client:
        first = await client.get("/v1/dashboard")
        assert first.status_code == 200 and first.json()["days"], first.text
        times = []
        for _ in range(reads):
            began = time.perf_counter()
            answer = await client.get("/v1/dashboard")
            times.append((time.perf_counter() - began) * 1000)
            assert answer.status_code == 200
    return {"p50 ms": h.median(times), "p99 ms": h.percentile(times, 0.99)}


def measure(quick: bool) -> dict[str, Any]:
    h.requires("psycopg", "uvicorn", "fastapi", "httpx2")
    ns, reads, dashboard_runs = ([300], 10, 1000) if quick else ([300, 3000], 30, 10_000)
    figures: dict[str, Any] = {}
    made = 0

    def measured(store: str, waiting: int, ended: int, ask: Any) -> dict[str, float]:
        nonlocal made
        made += 1
        pg = Database(DSN, f"bench_runs_listing_{os.getpid()}_{made}") if store == "PostgreSQL" else None
        db = scratch / f"runs-{made}.db"
        try:
            populate(pg.url if pg else db, waiting, ended)
            server = serve(db, pg.url if pg else None)
            try:
                result: dict[str, float] = h.run_on_thread(lambda: ask(server.url, reads))
                return result
            finally:
                server.stop()
        finally:
            if pg is not None:
                pg.drop()

    with h.scratch("listing-") as scratch:
        for store in ("SQLite", "PostgreSQL"):
            for n in ns:
                h.say(f"{store}, {n:,} waiting")
                figures[f"{store}, {n:,} waiting: GET /v1/runs?status=awaiting_approval"] = measured(
                    store, n, n, listing
                )
            h.say(f"{store}, dashboard")
            waiting = dashboard_runs // 10
            figures[f"{store}, {dashboard_runs:,} runs: GET /v1/dashboard"] = measured(
                store, waiting, dashboard_runs - waiting, dashboard
            )
    return figures
