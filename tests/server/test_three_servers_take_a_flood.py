"""Three `eudaimon serve` on one PostgreSQL take a flood of starts; one is killed -9 midway.

300 starts (modest, for a shared test machine; the issue's target is 3,000), spread over the
three servers from 16 clients, each with an `Idempotency-Key`. After 100 are answered one
server is killed; a start it never answered is retried, same key, on another server, which
finds the run if the killed one had journaled it. Then: every start has exactly one run,
every run completes (or waits for reconciliation, its WRITE's outcome lost with the killed
server), and no run's WRITE ran twice (the ledger).
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from _server_support import Server, wait_until
from flood_agents import DSN

pytestmark = pytest.mark.postgres

STARTS = 300
KILL_AFTER = 100


class FloodServer(Server):
    def command(self) -> list[str]:
        return [
            *super().command()[:3],
            "serve", "--store", DSN, "--agent", "flood_agents:flood",
            "--port", str(self.port), "--log-level", "warning",
        ]  # fmt: skip


def test_three_servers_one_killed_every_run_completes_once(tmp_path: Path) -> None:
    schema = f"eudaimon_flood_{uuid.uuid4().hex}"
    ledger = tmp_path / "ledger.jsonl"
    # Leases of 10 s (30 s by default): the 2 s the other server tests use lapse on a loaded
    # 2-core machine while their drivers live, and a taken-over WRITE waits for reconciliation.
    env = {"FLOOD_PG_SCHEMA": schema, "FLOOD_LEDGER": str(ledger), "EUDAIMON_LEASE_TTL_S": "10"}
    servers = [FloodServer(tmp_path / f"s{n}.db", env=env).start() for n in range(3)]
    answered = 0
    lock = threading.Lock()
    killed = threading.Event()

    def start(n: int) -> dict[str, Any]:
        nonlocal answered
        key = f"flood-{n}"
        for attempt in range(12):
            server = servers[(n + attempt) % 3]
            if server is servers[1] and killed.is_set():
                continue
            try:
                with server.client() as client:
                    answer = client.post("/v1/agents/flood/runs", json={"input": key}, headers={"Idempotency-Key": key})
            except httpx2.TransportError:
                continue  # the killed server: the same key, on another
            if answer.status_code >= 500:
                continue
            assert answer.status_code in (200, 201, 202), answer.text
            with lock:
                answered += 1
                if answered == KILL_AFTER:
                    servers[1].kill()
                    killed.set()
            run: dict[str, Any] = answer.json()
            return {"key": key, **run}
        raise AssertionError(f"start {key} was never answered")

    try:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            runs = list(pool.map(start, range(STARTS)))
        assert killed.is_set()
        ids = [r["run_id"] for r in runs]
        assert len(set(ids)) == STARTS  # one run per start, retried or not
        survivor = servers[0]

        def settled() -> list[dict[str, Any]] | None:
            with survivor.client() as client:
                found = [client.get(f"/v1/runs/{i}").json() for i in ids]
            return found if all(r["status"] not in ("running", "queued") for r in found) else None

        done: list[dict[str, Any]] = wait_until(settled, "every run to settle", tries=3000, pause_s=0.1)
        statuses = Counter(r["status"] for r in done)
        writes = Counter(json.loads(line)["run"] for line in ledger.read_text().splitlines())
        lost = [r["run_id"] for r in done if r["status"] == "awaiting_reconciliation"]
        ran = sum(1 for r in lost if writes[r])
        print(f"{STARTS} starts, one of three servers killed after {KILL_AFTER}: {dict(statuses)}; {ran} waiting ran")
        assert set(statuses) <= {"completed", "awaiting_reconciliation"}, statuses
        assert max(writes.values()) == 1, [r for r, c in writes.items() if c > 1]  # no WRITE twice
        for run in done:
            if run["status"] == "completed":
                assert writes[run["run_id"]] == 1
    finally:
        for server in servers:
            server.stop()
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
