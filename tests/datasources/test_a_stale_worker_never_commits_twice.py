"""A stale worker never commits a call a second time.

Worker A is stopped (SIGSTOP) inside a datasource tool's transaction, or right after its commit
before the journal's `tool_completed`. Worker B waits for A's lease to lapse, takes the run over
and completes it (running the call again, or reading its committed record). Then A is woken:
its second commit of the call fails on the completion record's key and its whole transaction
rolls back (or, having committed already, its journal append is fenced off). One row per call.

PostgreSQL only: on SQLite a process stopped inside a transaction holds the database's single
write lock, and every other writer waits for it (up to its busy timeout).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "durability"))
from _proc_support import open_store, pg_dsn, scratch_pg_schema, worker_env

from eudaimon.datasources import COMPLETIONS_TABLE

WORKER = Path(__file__).with_name("_datasource_soak_worker.py")
CALLS = 3


def _env(**extra: str) -> dict[str, str]:
    here = Path(__file__).parent
    path = os.pathsep.join([str(here.parent / "durability"), str(here), os.environ.get("PYTHONPATH", "")])
    return {**worker_env(0.5), "PYTHONPATH": path, **extra}


def _start(spec: str, url: str, table: str, run_id: str, **extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, str(WORKER), spec, url, table, str(CALLS), run_id]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(**extra))


@pytest.mark.postgres
@pytest.mark.parametrize("window", ["T", "C"], ids=["inside-the-transaction", "after-the-commit"])
async def test_a_worker_woken_after_a_takeover_never_commits_twice(window: str) -> None:
    if not os.environ.get("EUDAIMON_TEST_PG_DSN"):
        pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
    import psycopg

    url = pg_dsn()
    table = f"orders_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (run_id TEXT NOT NULL, n INTEGER NOT NULL, call_key TEXT NOT NULL)")
    run_id = f"run_{uuid.uuid4().hex}"
    with scratch_pg_schema("dsstale") as spec:
        stale = _start(spec, url, table, run_id, EUDAIMON_DS_STOP=window)
        try:
            assert stale.stdout is not None
            for line in stale.stdout:
                if line.startswith("Z "):
                    break
            else:
                raise AssertionError(f"the worker never stopped: {stale.stderr.read() if stale.stderr else ''}")
            time.sleep(0.2)
            taker = _start(spec, url, table, run_id)
            out, err = taker.communicate(timeout=60)
            assert taker.returncode == 0 and '"completed"' in out, (out, err)
            stale.send_signal(signal.SIGCONT)
            rest, stale_err = stale.communicate(timeout=60)
        finally:
            if stale.poll() is None:
                stale.send_signal(signal.SIGCONT)
                stale.kill()
        store = open_store(spec)
        try:
            events = await store.load(run_id)
        finally:
            await store.close()
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT run_id, n FROM {table}").fetchall()
        records = conn.execute(f"SELECT call_id FROM {COMPLETIONS_TABLE} WHERE run_id = %s", (run_id,)).fetchall()
        conn.execute(f"DROP TABLE {table}")
    assert Counter(n for _, n in rows) == dict.fromkeys(range(CALLS), 1)  # one row per call, none twice
    assert sorted(r[0] for r in records) == [f"call_{n}" for n in range(CALLS)]
    assert events[-1].type == "run_completed"
    assert not [e for e in events if e.type == "tool_outcome_unknown"]
    completed = Counter(e.data.call_id for e in events if e.type == "tool_completed")  # type: ignore[union-attr]
    assert set(completed.values()) == {1}
    assert stale.returncode == 3 and rest.startswith(("E ", "C ")), (stale.returncode, rest, stale_err[-2000:])
