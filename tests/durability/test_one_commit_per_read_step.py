"""One commit per all-READ step, two with a WRITE: the commit grouping, and kill -9 in between.

An all-READ step runs its calls before their intents are durable and commits once: the
model's answer, the intents, the results and the next model attempt together. A process
killed after its READ calls ran and before that commit leaves the model attempt open, so the
next driver asks the model again and runs the READ calls again, with the same keys. A step
with a WRITE still commits the model's answer and its intent before the WRITE runs.
`CommitLog` (in each worker process) shows where the commits fell.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _journal_checks import audit_runs
from _proc_runner import Procs
from _proc_support import read_commits, scratch_pg_schema

from eudaimon.core.digest import idempotency_key

PLAN = "look,look|write"
FUSED_READ_STEP = [
    "model_called",
    "tool_started",
    "tool_started",
    "tool_completed",
    "tool_completed",
    "model_attempt_started",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def procs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Procs]:
    if request.param == "sqlite":
        yield Procs(f"sqlite:///{tmp_path / 'fused.db'}", tmp_path, commit_log=tmp_path / "commits")
        return
    with scratch_pg_schema("fused") as spec:
        yield Procs(spec, tmp_path, commit_log=tmp_path / "commits")


def test_a_kill_between_read_calls_and_their_one_commit_reruns_them_with_the_same_keys(procs: Procs) -> None:
    """Invariant: killed after an all-READ step's calls ran and before its one commit, a run
    keeps no trace of the step but its open model attempt; resumed, the model is asked again,
    the READ calls run again as attempt 1 with the same idempotency keys, and the run completes.
    That step then commits once; the WRITE step after it commits its intent, alone with the
    model's answer, before the WRITE runs (and its result in a commit after that)."""
    run_id = "fused"
    killed = procs.kill_after_tools(run_id, PLAN, "allow", tools_in_flight=2)
    assert [e.type for e in procs.journal(run_id)] == ["run_started", "model_attempt_started"]
    assert all("tool_started" not in batch for batch in read_commits(procs.commit_log or Path(), killed))
    ran = procs.executions()
    assert sorted((e.call, e.attempt, e.incarnation) for e in ran) == [
        ("b0c0_look", 1, killed),
        ("b0c1_look", 1, killed),
    ]

    end = procs.run("resume", run_id, PLAN, "allow")
    assert end["status"] == "completed" and end["final_text"] == "done with 3 tool results"
    resumer = f"p{procs.count:03d}-resume"
    ran = procs.executions()
    for call in ("b0c0_look", "b0c1_look"):
        runs = [(e.attempt, e.key, e.incarnation) for e in ran if e.call == call]
        key = idempotency_key(run_id, call)
        assert runs == [(1, key, killed), (1, key, resumer)]
    assert [e.incarnation for e in ran if e.tool == "write"] == [resumer]
    assert read_commits(procs.commit_log or Path(), resumer) == [
        ["run_taken_over"],  # the resumer says whose run it took over, and after how long
        ["model_attempt_started"],  # the model is asked again: its attempt is durable first
        FUSED_READ_STEP,  # the all-READ step: one commit, after its calls ran
        ["model_called", "tool_started"],  # the WRITE's intent, before the WRITE runs
        ["tool_completed", "model_attempt_started"],
        ["model_called", "run_completed"],  # the final answer: one commit
    ]
    audit = audit_runs({run_id: procs.journal(run_id)}, procs.executions(), dead={killed})
    assert not audit.problems, audit.problems
    assert audit.uncommitted_reads == 2 and audit.reruns == 0
