"""A stalled process is not a dead one: stopped before a WRITE, replaced, woken, it must not act.

Process A starts a run whose only call is a WRITE and stops itself (SIGSTOP) — inside
`on_tool_call`, or right after its `tool_started` intent was committed, just before the tool.
Its lease lapses; process B resumes the run. After the intent, B cannot know whether the write
happened: the run waits for reconciliation, the operator asks for `retry=True`, and process C
performs the write. Then A gets SIGCONT. Before the fix A invoked the tool the moment it woke,
and the write happened twice. Now A checks, immediately before invoking a tool that may not run
twice, that its lease cannot have lapsed since its last confirmed renewal, and stops instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _journal_checks import audit_runs
from _proc_runner import Procs
from _proc_support import scratch_pg_schema

from eudaimon.runtime.process import operations


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def procs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Procs]:
    if request.param == "sqlite":
        yield Procs(f"sqlite:///{tmp_path / 'stall.db'}", tmp_path)
        return
    with scratch_pg_schema("stall") as spec:
        yield Procs(spec, tmp_path)


@pytest.mark.parametrize("point", ["intent", "hook"])
def test_a_process_stopped_before_a_write_does_not_write_when_it_wakes(procs: Procs, point: str) -> None:
    """Bug: a worker SIGSTOPped just before a WRITE (or inside `on_tool_call`), replaced by
    another process after its lease lapsed, performed the write again on SIGCONT after the
    operator had it retried. Invariant: the effect happens once; the woken process stops with
    `LeaseLost` (or loses the append race) and appends nothing; the executions' fencing tokens
    grow with each takeover."""
    run_id = f"stalled-{point}"
    plan = "write"
    a_inc, a = procs.start_stopped(run_id, plan, point)
    try:
        b = procs.run("resume", run_id, plan, "allow")
        if point == "intent":
            # A's intent is in the journal: B cannot tell whether the write happened.
            assert b["status"] == "awaiting_reconciliation", b
            [call] = b["unknown"]

            async def retry(store: Any) -> None:
                await operations.reconcile(store, run_id, call, retry=True, by="ops")

            procs.with_store(retry)
            c = procs.run("resume", run_id, plan, "allow")
            assert c["status"] == "completed", c
        else:
            assert b["status"] == "completed", b  # A stopped before its intent: B simply ran it
        seq_before_wake = len(procs.journal(run_id))
    finally:
        woken = procs.wake(a)
    assert woken.get("error") in ("LeaseLost", "ConcurrencyConflict"), woken
    writes = [e for e in procs.executions() if e.tool == "write"]
    assert len(writes) == 1, writes
    assert writes[0].incarnation != a_inc
    assert writes[0].token > 0  # a driver that took over from A's, which held token 0
    journal = procs.journal(run_id)
    assert len(journal) == seq_before_wake  # the woken process appended nothing
    audit = audit_runs({run_id: journal}, procs.executions(), dead={a_inc})
    assert not audit.problems, audit.problems
