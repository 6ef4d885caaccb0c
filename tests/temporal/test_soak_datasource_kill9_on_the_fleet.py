"""kill -9 soak of datasource tools through a Temporal worker: the `eudaimon worker` process whose
`eudaimon.tool` activity inserts a row into a PostgreSQL table is SIGKILLed inside the tool's
transaction (after its insert, before the commit) and between the datasource's commit and the
activity's answer (so before `tool_completed` is journaled), while runs are in flight; a new
worker is started after each kill, and Temporal retries the lost activity on it.

After every run completed: 0 duplicate rows, 0 lost rows (one row per call, under the call's
idempotency key), 0 `tool_outcome_unknown` (no run waited for an operator), one completion
record per call; every kill after a commit was read back from the datasource
(`tool_completed.recovered`), and the calls killed inside their transaction ran again.

A real Temporal dev server; the journal is a SQLite file, the datasource a PostgreSQL database
of its own. `EUDAIMON_DATASOURCE_FLEET_SOAK_KILLS` (default 12) is the number of kills, half in
each window.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from _fleet import HERE
from datasource_soak_agent import make

from eudaimon.datasources import COMPLETIONS_TABLE
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine
from support.datasource_soaks import ORDERS_COLUMNS, call_problems

KILLS = int(os.environ.get("EUDAIMON_DATASOURCE_FLEET_SOAK_KILLS", "12"))
CALLS = 3
"""Calls (rows) per run."""
IN_FLIGHT = 3
"""Runs in flight while a worker lives."""
HEARTBEAT_TIMEOUT_S = 3.0
WORKER_TIMEOUT_S = 120.0
"""How long one worker may go without reaching the window it is to be killed in."""
MARKS = {"txn": "T", "after_commit": "C"}


@contextlib.contextmanager
def scratch_database() -> Iterator[str]:
    """The URL of a PostgreSQL database of its own, dropped afterwards."""
    dsn = os.environ.get("EUDAIMON_TEST_PG_DSN")
    if not dsn:
        pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
    from support.databases import postgres_database

    with postgres_database("eudaimon_dsfleet", dsn) as url:
        yield url


class FleetSoak:
    """Workers started one after another, each SIGKILLed in a window; the runs driven meanwhile
    from this process through the `TemporalEngine`."""

    def __init__(self, target: str, queue: str, journal: str, logs: Path) -> None:
        self.target, self.queue, self.journal, self.logs = target, queue, journal, logs
        self.agent = make(
            store=journal,
            engine=TemporalEngine(target, task_queue=queue, heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S, read_attempts=20),
        )
        self.prompts: dict[str, asyncio.Task[str]] = {}
        self.kills: Counter[str] = Counter()
        self.workers = 0

    async def _drive(self, run_id: str) -> str:
        response = await self.agent.prompt(f"soak {run_id}", run_id=run_id)
        return str(response.status)

    def _top_up(self) -> None:
        for task in self.prompts.values():
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        while sum(1 for t in self.prompts.values() if not t.done()) < IN_FLIGHT:
            run_id = f"run_{uuid.uuid4().hex}"
            self.prompts[run_id] = asyncio.ensure_future(self._drive(run_id))

    async def _worker(self, *, marks: bool) -> asyncio.subprocess.Process:
        self.workers += 1
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "SOAK_MARKS": "1" if marks else "0"}
        command = [sys.executable, "-m", "eudaimon", "worker", "--temporal", self.target, "--task-queue", self.queue]
        command += ["--agent", "datasource_soak_agent:make", "--store", self.journal]
        log = open(self.logs / f"worker-{self.workers}.log", "wb")  # noqa: SIM115
        try:
            return await asyncio.create_subprocess_exec(
                *command,
                cwd=str(HERE),
                env=env,
                stdout=asyncio.subprocess.PIPE if marks else log,
                stderr=log,
            )
        finally:
            log.close()

    async def kill_in(self, mode: str) -> None:
        """Start a worker; SIGKILL it on its first line of `mode`'s window."""
        proc = await self._worker(marks=True)
        assert proc.stdout is not None
        mark = MARKS[mode] + " "
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WORKER_TIMEOUT_S
        try:
            while True:
                self._top_up()
                assert loop.time() < deadline, f"worker {self.workers} never reached window {mode}"
                try:
                    raw = await asyncio.wait_for(proc.stdout.readline(), 0.5)
                except TimeoutError:
                    continue
                assert raw, f"worker {self.workers} exited ({await proc.wait()}): see its log"
                if raw.decode().startswith(mark):
                    proc.send_signal(signal.SIGKILL)
                    break
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        self.kills[mode] += 1

    async def run(self, kills: int) -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        while sum(self.kills.values()) < kills:
            await self.kill_in("txn" if self.kills["txn"] <= self.kills["after_commit"] else "after_commit")
        last = await self._worker(marks=False)
        try:
            await asyncio.wait_for(asyncio.gather(*self.prompts.values()), 600)
        finally:
            last.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(last.wait(), 30)
            except TimeoutError:
                last.kill()
                await last.wait()
        return loop.time() - started


@pytest.mark.slow
async def test_datasource_writes_land_exactly_once_when_temporal_workers_are_killed(
    temporal_target: str,
    task_queue: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Invariants after EUDAIMON_DATASOURCE_FLEET_SOAK_KILLS SIGKILLs of the worker, half inside the
    tool's transaction and half between its commit and the activity's answer: every run
    completed; one row per call (0 duplicates, 0 lost), under the call's idempotency key; one
    completion record per call; no `tool_outcome_unknown`; every kill after a commit recovered
    from the datasource."""
    import psycopg

    table = f"orders_{uuid.uuid4().hex[:10]}"
    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    with scratch_database() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {table} ({ORDERS_COLUMNS})")
        for name, value in {"SOAK_URL": url, "SOAK_TABLE": table, "SOAK_CALLS": str(CALLS)}.items():
            monkeypatch.setenv(name, value)
        soak = FleetSoak(temporal_target, task_queue, journal, tmp_path)
        try:
            seconds = await soak.run(KILLS)
        finally:
            await soak.agent.aclose()
        statuses = Counter(task.result() for task in soak.prompts.values())
        store = open_store(journal)
        try:
            journals = {run: await store.load(run) for run in soak.prompts}
        finally:
            await store.close()
        with psycopg.connect(url) as conn:
            rows = conn.execute(f"SELECT run_id, n, call_key FROM {table}").fetchall()
            records = conn.execute(f"SELECT run_id, call_id, idempotency_key FROM {COMPLETIONS_TABLE}").fetchall()
    runs = list(soak.prompts)
    per_call = Counter((run, n) for run, n, _ in rows)
    duplicates = sum(c - 1 for c in per_call.values() if c > 1)
    lost = sum(1 for run in runs for n in range(CALLS) if (run, n) not in per_call)
    unknowns = sum(1 for events in journals.values() for e in events if e.type == "tool_outcome_unknown")
    completions = [e.data for events in journals.values() for e in events if e.type == "tool_completed"]
    recovered = sum(1 for d in completions if d.recovered)  # type: ignore[union-attr]
    keys = {
        (run, e.data.call_id): e.data.idempotency_key  # type: ignore[union-attr]
        for run, events in journals.items()
        for e in events
        if e.type == "tool_started"
    }
    with capsys.disabled():
        print(
            f"\n[datasource soak temporal-postgres] {sum(soak.kills.values())} kills ({dict(soak.kills)}) in "
            f"{seconds:.1f}s, {soak.workers} worker processes, {len(runs)} runs, {len(rows)} rows; "
            f"{duplicates} duplicate rows, {lost} lost, {unknowns} awaiting reconciliation, "
            f"{recovered} completions read back from the datasource"
        )
        problems = call_problems(journals, rows, records, calls=CALLS, tool="insert")
        for line in problems:
            print(line)
    # Call by call first: a failure says which call broke the promise, how, and its run's events.
    assert not problems, f"{len(problems)} broken promises, printed above"
    assert statuses == {"completed": len(runs)}
    assert all(events[-1].type == "run_completed" for events in journals.values())
    assert duplicates == 0 and lost == 0 and len(rows) == CALLS * len(runs)
    assert unknowns == 0
    assert all(not d.is_error for d in completions)  # type: ignore[union-attr]
    assert len(records) == len(rows) == len({(r, c) for r, c, _ in records})
    assert all(keys[(run, f"call_{n}")] == key for run, n, key in rows)
    assert soak.kills["txn"] >= KILLS // 2 and soak.kills["after_commit"] >= KILLS // 2
    # Every call killed after its commit ends read back from the datasource (more may be: a kill
    # lands in the same window of another run the worker drove at once).
    assert recovered >= soak.kills["after_commit"] > 0
