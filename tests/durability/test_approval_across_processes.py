"""Approval across processes: one process prompts and exits, another decides, a third resumes.

Nothing but the journal links them: the decision is appended by a process that never built
an Agent (`eudaimon.runtime.process.operations.approve`), and the resuming process acts on it. The
ledger (`_proc_support`) shows what really ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _journal_checks import audit_runs
from _proc_runner import Procs
from _proc_support import scratch_pg_schema

from eudaimon.core.events import ToolDenied, ToolStarted

PLAN = "send,look|look"
"""Step 1: an IRREVERSIBLE `send` (waits for a human) beside a READ `look`; step 2: another look."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def procs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Procs]:
    if request.param == "sqlite":
        yield Procs(f"sqlite:///{tmp_path / 'approval.db'}", tmp_path)
        return
    with scratch_pg_schema("approval") as spec:
        yield Procs(spec, tmp_path)


def _prompt_and_exit(procs: Procs, run_id: str) -> str:
    paused = procs.run("prompt", run_id, PLAN, "default")
    assert paused["status"] == "awaiting_approval"
    assert paused["returned"]["pending_approvals"] == paused["pending_approvals"]
    [call] = paused["pending_approvals"]
    assert [e.tool for e in procs.executions()] == ["look"]  # the sibling ran; send waits
    return str(call)


def test_a_call_approved_in_another_process_runs_exactly_once_in_a_third(procs: Procs) -> None:
    """Invariant: process A prompts (IRREVERSIBLE call → awaiting_approval) and exits; process B
    approves and exits; process C resumes and completes; the approved call ran exactly once,
    in C; deciding the same call again, from yet another process, is a clear error and changes
    nothing; resuming the finished run once more runs nothing."""
    run_id = "approve-across"
    call = _prompt_and_exit(procs, run_id)

    decided = procs.run("approve", run_id, call, "yes")
    assert decided["status"] == "running" and decided["pending_approvals"] == []
    again = procs.run("approve", run_id, call, "no")
    assert again["error"] == "InvalidOperation" and "decided once" in again["message"]

    done = procs.run("resume", run_id, PLAN)
    assert done["status"] == "completed" and done["final_text"] == "done with 3 tool results"
    sends = [e for e in procs.executions() if e.tool == "send"]
    assert [(e.call, e.attempt, e.pid) for e in sends] == [(call, 1, done["pid"])]

    assert procs.run("resume", run_id, PLAN)["next_seq"] == done["next_seq"]
    assert len([e for e in procs.executions() if e.tool == "send"]) == 1
    audit = audit_runs({run_id: procs.journal(run_id)}, procs.executions(), dead=())
    assert not audit.problems, audit.problems


def test_a_call_denied_in_another_process_never_runs(procs: Procs) -> None:
    """Invariant: a denial appended by another process becomes tool_denied when a third process
    resumes: the IRREVERSIBLE tool never runs, the model sees the denial as an error result and
    the run completes."""
    run_id = "deny-across"
    call = _prompt_and_exit(procs, run_id)

    procs.run("approve", run_id, call, "no")
    done = procs.run("resume", run_id, PLAN)
    assert done["status"] == "completed" and done["final_text"] == "done with 3 tool results"
    assert [e.tool for e in procs.executions()] == ["look", "look"]
    events = procs.journal(run_id)
    assert [e.data.call_id for e in events if isinstance(e.data, ToolDenied)] == [call]
    assert not [e for e in events if isinstance(e.data, ToolStarted) and e.data.call_id == call]
    audit = audit_runs({run_id: events}, procs.executions(), dead=())
    assert not audit.problems, audit.problems
