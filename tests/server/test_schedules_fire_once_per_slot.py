"""A schedule fires each slot exactly once whichever servers on one journal are up: three servers
fire a per-second schedule, one is killed with SIGKILL midway, and every second from the first
slot to the last has one run, each journaled once and completed. The run id names the schedule
and the slot, so a second server's start of a slot finds the first's."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx2
from _queue_support import Backend, QueueServer

from eudaimon.runtime.process.schedules import Schedules
from eudaimon.stores.base import EventStore
from eudaimon.stores.url import open_store


def _store(backend: Backend) -> EventStore:
    if backend.kind == "postgres":
        from eudaimon.stores.postgres import PostgresStore

        return PostgresStore(backend.store_url, schema=backend.schema)
    return open_store(backend.store_url)


async def _add(backend: Backend) -> None:
    store = _store(backend)
    try:
        await Schedules(store).add("quick", "* * * * * *", "scheduled hello", schedule_id="every-second")
    finally:
        await store.close()


async def _pause_and_read(backend: Backend) -> dict[str, list[str]]:
    store = _store(backend)
    try:
        await Schedules(store).pause("every-second")
        runs = await store.list_runs(limit=10_000)
        return {r.run_id: [e.type for e in await store.load(r.run_id)] for r in runs}
    finally:
        await store.close()


def test_three_servers_one_killed_fire_each_slot_once(backend: Backend, tmp_path: Path) -> None:
    asyncio.run(_add(backend))
    servers = [QueueServer(tmp_path / "runs.db", backend=backend, agents=("quick",)).start()]
    servers += [servers[0].again(), servers[0].again()]
    try:
        time.sleep(4)
        servers[1].kill()
        time.sleep(4)
        journals = asyncio.run(_pause_and_read(backend))
        time.sleep(1.5)  # a tick that read the schedule before the pause may still start a slot
        journals = asyncio.run(_pause_and_read(backend))
        slots = sorted(int(run_id.rsplit("-", 1)[1]) for run_id in journals if run_id.startswith("sched-every-second-"))
        assert len(slots) >= 6, journals.keys()
        assert slots == list(range(slots[0], slots[-1] + 1)), "a slot was skipped"
        for slot in slots:
            types = journals[f"sched-every-second-{slot}"]
            assert types.count("run_queued") == 1 and types.count("run_started") <= 1, types
        with httpx2.Client(base_url=servers[0].url, timeout=30) as client:
            answer = client.get("/v1/schedules")
            assert answer.status_code == 200, answer.text
            [shown] = answer.json()["schedules"]
        assert shown["paused"] is True and shown["last_run_id"] == f"sched-every-second-{slots[-1]}"
        now = datetime.now(UTC).timestamp()
        assert slots[-1] <= now
    finally:
        for server in servers:
            server.stop()
