"""`GET /v1/runs?status=awaiting_approval` (and `GET /v1/dashboard`) against a real server, as
the runs in the store grow: does listing by status cost a fold of every run not yet ended?

For each source tree (`--src`, e.g. main's and this branch's) and each N (`--ns`), a SQLite file
is written by that tree's own `SqliteStore` with N runs waiting for approval and `--ended` × N
completed runs, each on a conversation thread of its own (`t<i>`), then a real `eudaimon serve`
of that tree (uvicorn, the agents of `tests/server/server_agents.py`) is started on it and
asked, from one client thread of its own:

1. `--reads` sequential `GET /v1/runs?status=awaiting_approval&limit=50`: p50 and p99;
2. ten such requests at once (one burst): the wall time until the last answer;
3. with `--dashboard-runs` runs in the store (default 10,000, a separate file), `--reads`
   sequential `GET /v1/dashboard`: p50 and p99 (a tree without the endpoint shows n/a).

Every answer is checked (status 200, 50 runs, all awaiting approval), so both trees did the same
work. The trees alternate per N, so their figures sit side by side under the same machine load;
on a shared machine compare within one run of the script, not across runs.

    .venv/bin/python benchmarks/runs_listing.py [--src src ../main/src] [--ns 300 3000] [--reads 30]
        [--ended 1] [--dashboard-runs 10000] [--pg postgresql://postgres@127.0.0.1:5432/postgres]

With `--pg DSN` each measurement uses a PostgreSQL database of its own on that server (created,
then dropped), instead of a SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx2

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AGENTS = ROOT / "tests" / "server"
sys.path.insert(0, str(AGENTS))
from _server_support import Server  # noqa: E402

T = TypeVar("T")

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


def in_thread(work: Callable[[], Awaitable[T]]) -> T:
    """Run one measurement on an event loop of its own thread."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("v", asyncio.run(work())))
    thread.start()
    thread.join()
    return box["v"]  # type: ignore[no-any-return]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def populate(src: str, path: Path | str, waiting: int, ended: int) -> None:
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, "-c", _POPULATE, str(path), str(waiting), str(ended)]
    subprocess.run(cmd, env=env, check=True)


def serve(src: str, db: Path, store_url: str | None = None) -> Server:
    env = {"PYTHONPATH": os.pathsep.join([str(AGENTS), src])}
    server = Server(db, env=env)
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
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99), "burst10_ms": burst}


async def dashboard(url: str, reads: int) -> dict[str, float] | None:
    async with httpx2.AsyncClient(base_url=url, timeout=600) as client:
        first = await client.get("/v1/dashboard")
        if first.status_code == 404:
            return None
        assert first.status_code == 200 and first.json()["days"], first.text
        times = []
        for _ in range(reads):
            began = time.perf_counter()
            answer = await client.get("/v1/dashboard")
            times.append((time.perf_counter() - began) * 1000)
            assert answer.status_code == 200
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99)}


def label(src: str) -> str:
    try:
        commit = subprocess.run(["git", "-C", src, "log", "-1", "--format=%h"], capture_output=True, text=True)
        branch = subprocess.run(["git", "-C", src, "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True)
    except OSError:
        return src
    if commit.returncode != 0 or branch.returncode != 0:
        return src  # not a checkout (e.g. a `git archive` of an older commit)
    return f"{branch.stdout.strip()}@{commit.stdout.strip()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", nargs="+", default=[str(ROOT / "src")], help="source trees to compare")
    parser.add_argument("--ns", type=int, nargs="*", default=[300, 3000], help="runs waiting for approval (none: skip)")
    parser.add_argument("--ended", type=float, default=1.0, help="completed runs per waiting run")
    parser.add_argument("--reads", type=int, default=30, help="sequential requests per measurement")
    parser.add_argument("--dashboard-runs", type=int, default=10_000, help="runs in the dashboard's store (0: skip)")
    parser.add_argument("--pg", default=None, help="a PostgreSQL DSN: use a database of its own there, not SQLite")
    args = parser.parse_args()
    labels = {src: label(src) for src in args.src}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for n in args.ns:
            for src in args.src if n % 2 == 0 else list(reversed(args.src)):
                db = Path(scratch) / f"list-{n}-{len(rows)}.db"
                pg = Database(args.pg, f"bench_runs_listing_{len(rows)}") if args.pg else None
                try:
                    populate(src, pg.url if pg else db, n, round(n * args.ended))
                    server = serve(src, db, pg.url if pg else None)
                    try:
                        figures = in_thread(lambda: listing(server.url, args.reads))  # noqa: B023
                    finally:
                        server.stop()
                finally:
                    if pg is not None:
                        pg.drop()
                store = "postgres" if pg else "sqlite"
                rows.append(
                    {
                        "what": "GET /v1/runs?status=awaiting_approval",
                        "store": store,
                        "n": n,
                        "tree": labels[src],
                        **figures,
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
        if args.dashboard_runs:
            for src in args.src:
                db = Path(scratch) / f"dash-{len(rows)}.db"
                pg = Database(args.pg, f"bench_runs_listing_{len(rows)}") if args.pg else None
                try:
                    waiting = args.dashboard_runs // 10
                    populate(src, pg.url if pg else db, waiting, args.dashboard_runs - waiting)
                    server = serve(src, db, pg.url if pg else None)
                    try:
                        found = in_thread(lambda: dashboard(server.url, args.reads))  # noqa: B023
                    finally:
                        server.stop()
                finally:
                    if pg is not None:
                        pg.drop()
                store = "postgres" if pg else "sqlite"
                row = {
                    "what": "GET /v1/dashboard",
                    "store": store,
                    "n": args.dashboard_runs,
                    "tree": labels[src],
                    **(found or {}),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n| request | store | runs | tree | p50 ms | p99 ms | ten at once, ms |")
    print("|---|---|---:|---|---:|---:|---:|")
    for row in rows:
        burst = f"{row['burst10_ms']:.0f}" if "burst10_ms" in row else "-"
        p50 = f"{row['p50_ms']:.1f}" if "p50_ms" in row else "n/a"
        p99 = f"{row['p99_ms']:.1f}" if "p99_ms" in row else "n/a"
        print(f"| {row['what']} | {row['store']} | {row['n']} | {row['tree']} | {p50} | {p99} | {burst} |")


if __name__ == "__main__":
    main()
