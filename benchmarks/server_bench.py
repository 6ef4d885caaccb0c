"""The server under load: many streams following one run; reads while many runs progress.

Starts a real `eudaimon serve` (uvicorn, SQLite file, the agents of
`tests/server/server_agents.py`) on a free 127.0.0.1 port, then:

1. **fan-out** — K SSE clients (default 1, then 100) follow one `ticker` run of `--ticks` steps
   from its first event to its end. Each client checks it saw every journal event once, in
   order; reported: the delivery latency (client receive time − the event's `at`) of the events
   appended after the client's stream opened, p50 and p99 over all clients, and the ratio of
   100 clients to 1. The clients run in one Python process beside the server: on a small
   machine part of the latency is theirs.
2. **reads under load** — p50/p99 of `GET /v1/runs/{id}` and `GET /health`, first on an idle
   server, then while `--runs` (default 500) ticker runs progress at once; the ratio of each.

Each phase runs in a thread of its own with its own event loop; all traffic stays on 127.0.0.1
and every loop is bounded by a count. The machine this runs on may be shared: compare the
ratios in one run, not absolute numbers across runs.

    .venv/bin/python benchmarks/server_bench.py [--clients 100] [--runs 500] [--ticks 40] [--reads 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "server"))
from _server_support import Server  # noqa: E402

T = TypeVar("T")


def in_thread(work: Callable[[], Awaitable[T]]) -> T:
    """Run one phase on an event loop of its own thread."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("v", asyncio.run(work())))
    thread.start()
    thread.join()
    return box["v"]  # type: ignore[no-any-return]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def follow(client: httpx2.AsyncClient, run_id: str) -> list[float]:
    """Follow the run to its end; return the delivery latency (ms) of each journal event appended
    after the stream opened (older ones are replay, not delivery)."""
    latencies: list[float] = []
    expected = 0
    fields: dict[str, str] = {}
    async with client.stream("GET", f"/v1/runs/{run_id}/events/stream") as response:
        opened = time.time()
        async for line in response.aiter_lines():
            if line == "":
                if fields.get("event") == "end":
                    break
                if "id" in fields:
                    row = json.loads(fields["data"])
                    assert int(fields["id"]) == expected, f"got seq {fields['id']}, expected {expected}"
                    expected += 1
                    sent = datetime.fromisoformat(row["at"]).timestamp()
                    if sent >= opened:
                        latencies.append((time.time() - sent) * 1000)
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.lstrip(" ")
    return latencies


async def fan_out(server: Server, clients: int, ticks: int) -> list[float]:
    limits = httpx2.Limits(max_connections=clients + 4)
    async with httpx2.AsyncClient(base_url=server.url, timeout=120, limits=limits) as client:
        run = await client.post(
            "/v1/agents/ticker/runs", json={"input": f"ticks={ticks}", "thread_id": f"fan-{clients}"}
        )
        run_id = run.json()["run_id"]
        results = await asyncio.gather(*(follow(client, run_id) for _ in range(clients)))
    return [latency for r in results for latency in r]


async def read_latencies(server: Server, run_id: str, reads: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"run": [], "health": []}
    async with httpx2.AsyncClient(base_url=server.url, timeout=60) as client:
        for _ in range(reads):
            for name, path in (("run", f"/v1/runs/{run_id}"), ("health", "/health")):
                started = time.perf_counter()
                answer = await client.get(path)
                out[name].append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200
    return out


async def under_load(
    server: Server, runs: int, ticks: int, reads: int, probe: str
) -> tuple[dict[str, list[float]], int]:
    async with httpx2.AsyncClient(base_url=server.url, timeout=120, limits=httpx2.Limits(max_connections=32)) as client:
        sem = asyncio.Semaphore(32)

        async def start(n: int) -> None:
            async with sem:
                await client.post("/v1/agents/ticker/runs", json={"input": f"ticks={ticks}", "thread_id": f"load-{n}"})

        await asyncio.gather(*(start(n) for n in range(runs)))
        measured = await read_latencies(server, probe, reads)
        driving = (await client.get("/health")).json()["driving"]
    return measured, driving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--only", choices=("fanout", "reads"), help="Run one phase only.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        server = Server(Path(scratch) / "runs.db", env={"EUDAIMON_TEST_STEP_S": "0.02", "EUDAIMON_LEASE_TTL_S": "30"})
        server.start()
        try:
            if args.only != "reads":
                fan_out_phase(server, args.clients, args.ticks)
            if args.only != "fanout":
                reads_phase(server, args.runs, args.ticks, args.reads)
        finally:
            server.stop()


def fan_out_phase(server: Server, clients: int, ticks: int) -> None:
    print(f"fan-out: {ticks}-step run, delivery latency per journal event (ms)")
    single = in_thread(lambda: fan_out(server, 1, ticks))
    many = in_thread(lambda: fan_out(server, clients, ticks))
    for label, values in (("1 client", single), (f"{clients} clients", many)):
        print(f"  {label:>12}: p50 {pct(values, 0.5):7.1f}  p99 {pct(values, 0.99):7.1f}  ({len(values)} events)")
    print(f"  ratio p99 {clients}/1: {pct(many, 0.99) / pct(single, 0.99):.1f}x")


def reads_phase(server: Server, runs: int, ticks: int, reads: int) -> None:
    async def probe_run() -> str:
        async with httpx2.AsyncClient(base_url=server.url, timeout=60) as client:
            answer = await client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=5"})
            return str(answer.json()["run_id"])

    probe = in_thread(probe_run)
    idle = in_thread(lambda: read_latencies(server, probe, reads))
    loaded, driving = in_thread(lambda: under_load(server, runs, ticks * 5, reads, probe))
    print(f"reads: {reads} each, idle vs while {runs} runs progress ({driving} still driven at the end)")
    for name in ("run", "health"):
        a, b = idle[name], loaded[name]
        print(
            f"  GET {'/v1/runs/{id}' if name == 'run' else '/health':<14} idle p50 {statistics.median(a):6.1f} "
            f"p99 {pct(a, 0.99):6.1f}   loaded p50 {statistics.median(b):6.1f} p99 {pct(b, 0.99):7.1f} "
            f"  ratio p99 {pct(b, 0.99) / pct(a, 0.99):.1f}x"
        )


if __name__ == "__main__":
    main()
