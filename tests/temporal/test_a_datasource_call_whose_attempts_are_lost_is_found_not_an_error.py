"""A datasource call whose every Temporal attempt was lost (the worker SIGKILLed after the
datasource's commit, and no attempt left: `read_attempts=1`) is found in the datasource and
completed from its record; the model is not shown an error.

Before, a lost attempt of a call Temporal may not retry any more was answered to the model as
`TimeoutError: the tool's activity did not finish`, as for a READ tool, while its row and
record had committed: the model was told the write failed when it had happened (and one that
tries again writes twice), or, killed inside the transaction, the call ended as an error with
no row (the fleet soak's "lost"). A datasource call's outcome is in the datasource, so the
workflow now recovers the call: the loop runs it again at the next attempt, whose first
statement is the lookup.

A real Temporal dev server, `eudaimon worker` processes, a real PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _fleet import HERE
from datasource_soak_agent import make

from eudaimon.datasources import COMPLETIONS_TABLE
from eudaimon.temporal import TemporalEngine
from support.datasource_soaks import call_problems, orders_database


@pytest.fixture
def shop(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    dsn = os.environ.get("EUDAIMON_TEST_PG_DSN")
    if not dsn:
        pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
    with orders_database("eudaimon_dslost", dsn) as (url, table):
        for name, value in {"SOAK_URL": url, "SOAK_TABLE": table, "SOAK_CALLS": "1"}.items():
            monkeypatch.setenv(name, value)
        yield url, table


async def _worker(target: str, queue: str, journal: str, log: Path, *, marks: bool) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "SOAK_MARKS": "1" if marks else "0"}
    command = [sys.executable, "-m", "eudaimon", "worker", "--temporal", target, "--task-queue", queue]
    command += ["--agent", "datasource_soak_agent:make", "--store", journal]
    with open(log, "wb") as out:
        return await asyncio.create_subprocess_exec(
            *command, cwd=str(HERE), env=env, stdout=asyncio.subprocess.PIPE if marks else out, stderr=out
        )


async def _stop(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()


@pytest.mark.parametrize("window", ["C", "T"])
async def test_a_call_whose_attempts_are_lost_is_recovered_not_answered_as_an_error(
    window: str, temporal_target: str, task_queue: str, tmp_path: Path, shop: tuple[str, str]
) -> None:
    """`C`: killed after the commit, the call is read back from its record (`recovered`).
    `T`: killed inside the transaction, it runs again. Either way one row, no error."""
    import psycopg

    url, table = shop
    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    engine = TemporalEngine(temporal_target, task_queue=task_queue, heartbeat_timeout_s=2.0, read_attempts=1)
    agent = make(store=journal, engine=engine)
    run_id = f"run_{uuid.uuid4().hex}"
    victim = await _worker(temporal_target, task_queue, journal, tmp_path / "victim.log", marks=True)
    survivor = None
    try:
        prompt = asyncio.ensure_future(agent.prompt("one row", run_id=run_id))
        assert victim.stdout is not None
        while True:
            line = await asyncio.wait_for(victim.stdout.readline(), 120)
            assert line, (tmp_path / "victim.log").read_text()
            if line.decode().startswith(f"{window} "):
                victim.send_signal(signal.SIGKILL)  # the tool held the window open for 50 ms
                break
        await victim.wait()
        survivor = await _worker(temporal_target, task_queue, journal, tmp_path / "survivor.log", marks=False)
        response = await asyncio.wait_for(prompt, 120)
        events = await agent.store.load(run_id)
    finally:
        await _stop(victim, signal.SIGKILL)
        if survivor is not None:
            await _stop(survivor, signal.SIGINT)
        await agent.aclose()
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT run_id, n, call_key FROM {table}").fetchall()
        records = conn.execute(f"SELECT run_id, call_id, idempotency_key FROM {COMPLETIONS_TABLE}").fetchall()
    assert str(response.status) == "completed", events
    problems = call_problems({run_id: events}, rows, records, calls=1, tool="insert")
    assert not problems, "\n".join(problems)
    [completed] = [e.data for e in events if e.type == "tool_completed"]
    assert completed.recovered is (window == "C")  # type: ignore[union-attr]
    # The lost attempt was recovered by the loop: a second intent, at the next attempt.
    assert [e.data.attempt for e in events if e.type == "tool_started"] == [1, 2]  # type: ignore[union-attr]
