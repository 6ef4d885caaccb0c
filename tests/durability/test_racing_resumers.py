"""Racing resumers: 8 OS processes resume the same run at the same moment.

Whatever the interleaving of their lease waits, reloads and appends, the `tool_started`
intent is the latch: every call is executed by exactly one process, every process returns
the same final state, and the journal stays gap-free. Run against a SQLite file and a
PostgreSQL schema; the ledger (`_proc_support`) is the outside world's record of executions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _journal_checks import audit_runs
from _proc_runner import Procs
from _proc_support import scratch_pg_schema

from eudaimon.runtime.process import operations

RESUMERS = 8


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def procs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Procs]:
    if request.param == "sqlite":
        yield Procs(f"sqlite:///{tmp_path / 'race.db'}", tmp_path)
        return
    with scratch_pg_schema("race") as spec:
        yield Procs(spec, tmp_path)


def _consistent(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Every process saw the same end: same status, answer, messages and journal length."""
    assert len(reports) == RESUMERS
    returned = [r["returned"] for r in reports]
    assert all(r == returned[0] for r in returned), returned
    ends = {(r["status"], r["final_text"], r["next_seq"], tuple(r["unknown"])) for r in reports}
    assert len(ends) == 1, ends
    return reports[0]


def test_eight_resumers_of_a_run_with_approved_calls_execute_each_call_once(procs: Procs) -> None:
    """Invariant: a run paused with approved (and one denied) calls, resumed by 8 processes at
    once, executes every approved call exactly once and the denied one never; all 8 processes
    return the same completed state; the journal is gap-free."""
    run_id = "race-approved"
    plan = "send,write,put,look,send,write"
    paused = procs.run("prompt", run_id, plan, "ask")
    assert paused["status"] == "awaiting_approval"
    calls = paused["pending_approvals"]
    assert len(calls) == 6
    denied = calls[-1]

    async def decide(store: Any) -> None:
        for call in calls:
            await operations.approve(store, run_id, call, call != denied, by="boss")

    procs.with_store(decide)

    end = _consistent(procs.race(RESUMERS, "resume", run_id, plan))
    assert end["status"] == "completed" and end["final_text"] == "done with 6 tool results"
    ran = Counter((e.call, e.attempt) for e in procs.executions())
    assert ran == Counter({(call, 1): 1 for call in calls if call != denied})
    audit = audit_runs({run_id: procs.journal(run_id)}, procs.executions(), dead=())
    assert not audit.problems, audit.problems


def test_eight_resumers_of_a_run_crashed_mid_batch_agree_on_what_is_ambiguous(procs: Procs) -> None:
    """Invariant: after a kill -9 with six calls in flight, 8 processes resuming at once re-run
    each READ / idempotent call exactly once (attempt 2, same key), never re-run the WRITE and
    IRREVERSIBLE calls, all report the same awaiting_reconciliation state naming exactly those
    two; after reconciliation (one output, one retry) 8 racing resumers run the retried call
    exactly once more and all return the same completed state."""
    run_id = "race-crashed"
    plan = "look,put,write,send,look,put"
    procs.kill_after_tools(run_id, plan, "allow", tools_in_flight=6)
    first = procs.executions()
    assert Counter(e.attempt for e in first) == {1: 6}
    write_call = next(e.call for e in first if e.tool == "write")
    send_call = next(e.call for e in first if e.tool == "send")

    paused = _consistent(procs.race(RESUMERS, "resume", run_id, plan))
    assert paused["status"] == "awaiting_reconciliation"
    assert sorted(paused["unknown"]) == sorted([write_call, send_call])
    reruns = Counter((e.call, e.attempt) for e in procs.executions() if e.attempt == 2)
    assert reruns == Counter({(e.call, 2): 1 for e in first if e.tool in ("look", "put")})

    async def reconcile(store: Any) -> None:
        await operations.reconcile(store, run_id, write_call, output="the write happened", by="ops")
        await operations.reconcile(store, run_id, send_call, retry=True, by="ops")

    procs.with_store(reconcile)
    end = _consistent(procs.race(RESUMERS, "resume", run_id, plan))
    assert end["status"] == "completed" and end["final_text"] == "done with 6 tool results"
    by_call = Counter(e.call for e in procs.executions())
    assert by_call[write_call] == 1 and by_call[send_call] == 2
    assert all(n == 2 for call, n in by_call.items() if call not in (write_call, send_call))
    audit = audit_runs({run_id: procs.journal(run_id)}, procs.executions(), dead=procs.killed)
    assert not audit.problems, audit.problems
    assert (audit.reruns, audit.unknowns, audit.operator_retries) == (4, 2, 1)


def test_a_stalled_driver_whose_lease_lapsed_stops_before_its_next_effect(procs: Procs) -> None:
    """Invariant (DESIGN §5): a live process whose lease lapsed — its event loop blocked inside
    a WRITE tool for 3 lease lifetimes — is taken over by a resumer, which finds the WRITE call
    ambiguous (tool_outcome_unknown) and re-runs only the READ sibling; when the stalled process
    wakes it appends nothing more (its commit is refused: LeaseLost or ConcurrencyConflict), so
    the WRITE's result never reaches the journal from a process that no longer owns the run;
    after reconciliation the run completes with the WRITE executed exactly once."""
    run_id = "stalled"
    plan = "write,look"
    stall_s = procs.lease_ttl_s * 3
    a_inc, a_report, b_report = procs.stall_and_take_over(run_id, plan, "write", stall_s)
    assert a_report.get("error") in ("LeaseLost", "ConcurrencyConflict"), a_report
    assert b_report["status"] == "awaiting_reconciliation", b_report
    [write_call] = b_report["unknown"]
    ran = procs.executions()
    assert [(e.attempt, e.incarnation) for e in ran if e.call == write_call] == [(1, a_inc)]

    async def reconcile(store: Any) -> None:
        await operations.reconcile(store, run_id, write_call, output="written once", by="ops")

    procs.with_store(reconcile)
    end = procs.run("resume", run_id, plan, "allow")
    assert end["status"] == "completed" and end["final_text"] == "done with 2 tool results"
    assert [e.call for e in procs.executions()].count(write_call) == 1
    audit = audit_runs({run_id: procs.journal(run_id)}, procs.executions(), dead={a_inc})
    assert not audit.problems, audit.problems
    assert audit.unknowns == 1
