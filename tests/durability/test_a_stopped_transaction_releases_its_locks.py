"""Invariant: a process stopped inside one of the PostgreSQL store's transactions does not block
the other writers for as long as it is stopped, and its transaction never lands.

A stopped process's session stays open, so a transaction it had begun keeps its row locks: here
the first append of a run, stopped after it inserted the run's first message (stored once, by
digest, for every run). Another run whose first message is the same then waited on that row for
as long as the process stayed stopped (forever, for a paused VM nobody resumes). The store's
sessions now have `idle_in_transaction_session_timeout`: the server ends the stalled session,
rolling its transaction back, and the other writer goes on; the woken process's append fails.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from _stalled_pg_append import first_batch

from eudaimon.stores.postgres import PostgresStore

pytestmark = pytest.mark.postgres

DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
SCRIPT = Path(__file__).with_name("_stalled_pg_append.py")
TIMEOUT_S = 1.0
WAIT_S = 30.0
"""How long the other writer may take here: the stall lasts until the test ends."""


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"eudaimon_test_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


async def test_a_writer_is_not_blocked_by_a_stopped_transaction(schema: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path("src").resolve()), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), DSN, schema, str(TIMEOUT_S), "run-stopped"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(SCRIPT.parent),
    )
    store = PostgresStore(DSN, schema=schema, stalled_transaction_timeout_s=TIMEOUT_S)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "Z"  # stopped inside its transaction
        started = time.monotonic()
        await asyncio.wait_for(store.append("run-other", 0, first_batch("run-other")), WAIT_S)
        waited = time.monotonic() - started
        assert waited < WAIT_S
        assert [e.seq for e in await store.load("run-other")] == [0]

        proc.send_signal(signal.SIGCONT)
        out, _ = proc.communicate(timeout=30)
        assert out.split()[0] == "failed", out  # its session was ended: its commit never lands
        assert await store.load("run-stopped") == []
        assert [s.run_id for s in await store.list_runs()] == ["run-other"]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
        await store.close()
