"""The server under load: many SSE streams following one run; reads while many runs progress.

Starts a real `eudaimon serve` (uvicorn, SQLite file, the agents of
`tests/server/_server_agents.py`) on a free 127.0.0.1 port, then:

1. **fan-out** — 1, then 100 SSE clients follow one `ticker` run (a READ tool a step, 20 ms of
   "model" per step) from its first event to its end. Each client checks it saw every journal
   event once, in order; reported: the delivery latency (client receive time − the event's
   `at`) of the events appended after the client's stream opened, p50 and p99 over all clients.
2. **reads under load** — p50/p99 of `GET /v1/runs/{id}` and `GET /health`, first on an idle
   server, then while 500 ticker runs progress at once.

Each phase runs on a thread of its own with its own event loop; the clients share one process
beside the server, so on a small machine part of the latency is theirs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime
from typing import Any

import _harness as h

ROUNDS = 1
sys.path.insert(0, str(h.REPO / "tests" / "server"))


async def follow(client: Any, run_id: str) -> list[float]:
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


async def fan_out(server: Any, clients: int, ticks: int) -> list[float]:
    import httpx2

    limits = httpx2.Limits(max_connections=clients + 4)
    async with httpx2.AsyncClient(base_url=server.url, timeout=120, limits=limits) as client:
        run = await client.post(
            "/v1/agents/ticker/runs", json={"input": f"ticks={ticks}", "thread_id": f"fan-{clients}"}
        )
        run_id = run.json()["run_id"]
        results = await asyncio.gather(*(follow(client, run_id) for _ in range(clients)))
    return [latency for r in results for latency in r]


async def read_latencies(server: Any, run_id: str, reads: int) -> dict[str, list[float]]:
    import httpx2

    out: dict[str, list[float]] = {"run": [], "health": []}
    async with httpx2.AsyncClient(base_url=server.url, timeout=60) as client:
        for _ in range(reads):
            for name, path in (("run", f"/v1/runs/{run_id}"), ("health", "/health")):
                started = time.perf_counter()
                answer = await client.get(path)
                out[name].append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200
    return out


async def under_load(server: Any, runs: int, ticks: int, reads: int, probe: str) -> tuple[dict[str, list[float]], int]:
    import httpx2

    async with httpx2.AsyncClient(base_url=server.url, timeout=120, limits=httpx2.Limits(max_connections=32)) as client:
        sem = asyncio.Semaphore(32)

        async def start(n: int) -> None:
            async with sem:
                await client.post("/v1/agents/ticker/runs", json={"input": f"ticks={ticks}", "thread_id": f"load-{n}"})

        await asyncio.gather(*(start(n) for n in range(runs)))
        measured = await read_latencies(server, probe, reads)
        driving = (await client.get("/health")).json()["driving"]
    return measured, driving


def measure(quick: bool) -> dict[str, Any]:
    h.requires("uvicorn", "fastapi", "httpx2")
    from _server_support import Server

    clients, runs, ticks, reads = (10, 50, 10, 30) if quick else (100, 500, 40, 300)
    figures: dict[str, Any] = {}
    with h.scratch("server-") as scratch:
        server = Server(scratch / "runs.db", env={"EUDAIMON_TEST_STEP_S": "0.02", "EUDAIMON_LEASE_TTL_S": "30"})
        server.start()
        try:
            for n in (1, clients):
                h.say(f"fan-out to {n} clients")
                latencies = h.run_on_thread(lambda n=n: fan_out(server, n, ticks))
                figures[f"fan-out, {n} SSE clients / delivery p50 ms"] = h.percentile(latencies, 0.5)
                figures[f"fan-out, {n} SSE clients / delivery p99 ms"] = h.percentile(latencies, 0.99)
            h.say(f"reads, idle and while {runs} runs progress")
            probe = h.run_on_thread(lambda: probe_run(server))
            idle = h.run_on_thread(lambda: read_latencies(server, probe, reads))
            loaded, _ = h.run_on_thread(lambda: under_load(server, runs, ticks * 5, reads, probe))
        finally:
            server.stop()
    for name, path in (("run", "GET /v1/runs/{id}"), ("health", "GET /health")):
        for when, values in (("idle", idle[name]), (f"while {runs} runs progress", loaded[name])):
            figures[f"{path}, {when} / p50 ms"] = h.percentile(values, 0.5)
            figures[f"{path}, {when} / p99 ms"] = h.percentile(values, 0.99)
    return figures


async def probe_run(server: Any) -> str:
    import httpx2

    async with httpx2.AsyncClient(base_url=server.url, timeout=60) as client:
        answer = await client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=5"})
        return str(answer.json()["run_id"])
