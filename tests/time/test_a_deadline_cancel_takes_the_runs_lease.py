"""A deadline that cancels the run is written as a cancel is: under the run's lease, its commit
fenced by it. Two processes racing the deadline write one `approval_timed_out` and one
`run_cancelled`; a process driving the run (holding its lease) is left to fire it itself."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from _time_support import Opener, payer

from eudaimon.core.events import ApprovalTimedOut, RunCancelled
from eudaimon.runtime.process import timers
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

TIMEOUT_S = 0.4
PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
RACERS = 2
_FIRE = """
import asyncio, sys, time
from eudaimon.runtime.process import timers
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

async def main(kind: str, where: str, schema: str, run_id: str, at: float) -> None:
    store = SqliteStore(where) if kind == "sqlite" else PostgresStore(where, schema=schema, min_size=1, max_size=1)
    await store.load(run_id)  # connected before the start line
    await asyncio.sleep(max(0.0, at - time.time()))
    fired = await timers.fire(store, run_id)
    print("fired" if fired is not None else "nothing")
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])))
"""


def _where(store: object, tmp_path: Path) -> tuple[str, str, str]:
    """Where the racers open the fixture's journal (`conftest.open_store`)."""
    if isinstance(store, SqliteStore):
        return "sqlite", str(tmp_path / "runs.db"), "-"
    assert isinstance(store, PostgresStore)
    return "postgres", PG_DSN, store.schema


async def test_two_processes_racing_a_cancelling_deadline_write_one_result(open_store: Opener, tmp_path: Path) -> None:
    """Invariant: two OS processes fire the same cancelling deadline at the same instant, over 3
    runs: each journal ends with exactly one `approval_timed_out` and one `run_cancelled`, and
    exactly one process says it fired."""
    store = open_store()
    kind, where, schema = _where(store, tmp_path)
    agent = payer(store, [], approval_timeout_s=TIMEOUT_S, on_approval_timeout="cancel")
    for _ in range(3):
        paused = await agent.prompt("pay")
        at = time.time() + 2.5 + TIMEOUT_S  # the racers' imports done, the deadline passed
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", _FIRE, kind, where, schema, paused.run_id, str(at)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(RACERS)
        ]
        said = []
        for racer in racers:
            out, err = await asyncio.to_thread(racer.communicate, timeout=60)
            assert racer.returncode == 0, err
            said.append(out.strip())
        events = [e.data for e in await store.load(paused.run_id)]
        assert sum(isinstance(e, ApprovalTimedOut) for e in events) == 1, events
        assert sum(isinstance(e, RunCancelled) for e in events) == 1, events
        assert isinstance(events[-1], RunCancelled) and events[-1].by == "deadline"
        assert sorted(said) == ["fired", "nothing"], said


async def test_a_cancelling_deadline_waits_for_the_lease_its_driver_holds(open_store: Opener) -> None:
    """Invariant: while another process holds the run's lease, a sweep past a cancelling deadline
    journals nothing; once the lease is free, the next sweep cancels the run."""
    store = open_store()
    agent = payer(store, [], approval_timeout_s=TIMEOUT_S, on_approval_timeout="cancel")
    paused = await agent.prompt("pay")
    driver = LeaseKeeper(open_store(), f"run:{paused.run_id}")
    await driver.acquire(wait=False)
    await asyncio.sleep(TIMEOUT_S + 0.1)

    assert await timers.fire_due(open_store()) == []
    assert "approval_timed_out" not in [e.type for e in await store.load(paused.run_id)]

    await driver.release()
    [fired] = await timers.fire_due(open_store())
    assert fired.run_id == paused.run_id and fired.state.status == "cancelled"
