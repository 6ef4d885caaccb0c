"""kill -9 while a child agent's WRITE tool runs: resuming the parent resumes the child, the
tool is not executed again, and the tree waits naming the ambiguous call; settled on the
parent, the whole tree completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _tree import build, ledger_lines

from eudaimon.core.state import CallStatus
from eudaimon.runtime.process.tree import waiting_calls

WORKER = str(Path(__file__).with_name("_tree_worker.py"))


def _wait_for(predicate: object, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


async def test_killed_mid_child_write_is_never_executed_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: after kill -9 mid child tool, resume leaves the WRITE at one execution, the
    parent waits for reconciliation naming the child's call, and reconciling it on the parent
    completes parent and child."""
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    ledger = tmp_path / "ledger.jsonl"
    env = {**os.environ, "EUDAIMON_LEASE_TTL_S": "1", "EUDAIMON_TEST_WRITE_SLEEP_S": "120"}
    worker = subprocess.Popen([sys.executable, WORKER, store, str(ledger), "run_tree"], env=env)
    try:
        _wait_for(lambda: ledger_lines(ledger) or worker.poll() is not None, "the child's tool to start")
        assert worker.poll() is None, "the worker exited before its tool ran"
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
    finally:
        if worker.poll() is None:
            worker.kill()

    monkeypatch.setenv("EUDAIMON_LEASE_TTL_S", "1")
    async with build(store, ledger) as agent:
        paused = await agent.resume("run_tree")  # waits out the dead process's leases
        assert paused.status == "awaiting_reconciliation"
        state = await agent.state("run_tree")
        unknown = await waiting_calls(agent.store, state, CallStatus.UNKNOWN)
        assert [(c.id, c.name) for c in unknown] == [("w1", "write_record")]
        child = await agent.state("run_tree.c1")
        assert child.status == "awaiting_reconciliation" and child.parent_call is not None
        assert len(ledger_lines(ledger)) == 1

        await agent.reconcile("run_tree", "w1", output="wrote invoice 7", by="ops")
        done = await agent.resume("run_tree")
    assert (done.status, done.final_text) == ("completed", "the clerk says: recorded: wrote invoice 7")
    assert len(ledger_lines(ledger)) == 1
