"""Fault-injection soak: runs driven by worker processes that are SIGKILLed at random moments.

Each worker is a fresh `python` process (`_soak_worker.py`) driving a few runs at once; their
tools — READ, idempotent WRITE, WRITE and IRREVERSIBLE (allowed by the approval policy) —
write every execution to a ledger outside eudaimon before returning, then sleep a few ms; the
model sleeps a few ms too. The parent (`_soak_driver.py`) kills workers with SIGKILL inside
tool calls (between `tool_started` and `tool_completed`), inside model calls, and at random,
starts fresh ones that resume, and reconciles what waits for an operator, until every run has
completed. Then `_journal_checks.audit_runs` holds every journal against the ledger.

`EUDAIMON_SOAK_KILLS` (default 100) is the number of kills per backend; raise it for long soaks.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _journal_checks import Audit, audit_runs
from _proc_support import Execution, open_store, scratch_pg_schema
from _soak_driver import Soak, SoakResult, executions_of

KILLS = int(os.environ.get("EUDAIMON_SOAK_KILLS", "100"))


def _summary(backend: str, result: SoakResult, audit: Audit, executions: list[Execution]) -> str:
    modes = ", ".join(f"{mode} {n}" for mode, n in sorted(result.kill_modes.items()))
    in_flight = {e.incarnation for e in executions if (e.run, e.call, e.attempt) not in audit.completed}
    mid_tool = len(in_flight & result.killed)
    return (
        f"\n[soak {backend}] {result.kills} kills ({modes}) in {result.seconds:.1f}s; "
        f"{mid_tool} killed a tool between its ledger line and tool_completed, "
        f"{result.kills_with_open_model_attempt} left a model attempt open; "
        f"{result.incarnations} processes ({result.clean_exits} clean exits, "
        f"{len(result.crashed)} journal-error exits {dict(result.crash_kinds)}); "
        f"{audit.runs} runs, {audit.events} events, {audit.executions} executions, "
        f"{audit.reruns} recovery re-runs of READ/idempotent calls, "
        f"{audit.uncommitted_reads} READ executions whose one-commit step never landed, "
        f"{audit.unknowns} tool_outcome_unknown ({audit.unknown_ran} had run, {audit.unknown_never_ran} had not), "
        f"reconciled {result.reconciled_output} with output and {result.reconciled_retry} with retry=True "
        f"({audit.operator_retries} operator re-runs)"
    )


async def _soak(spec: str, tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    soak = Soak(spec, tmp_path, kills=KILLS, label=f"soak-{backend}", seed=KILLS)
    result = await soak.run()
    executions = executions_of(soak.ledger_dir, result.dead)
    store = open_store(spec)
    try:
        journals = {run: await store.load(run) for run in result.runs}
    finally:
        await store.close()
    audit = audit_runs(journals, executions, result.dead)
    with capsys.disabled():  # the summary shows in the test output, with or without -s
        print(_summary(backend, result, audit, executions))
    assert not audit.problems, "\n".join(audit.problems[:30])
    assert result.kills >= KILLS
    assert audit.statuses == {"completed": len(result.runs)}
    if KILLS >= 50:  # the soak is only worth its time if kills landed where they matter
        assert result.kill_modes["tool"] > 0 and audit.unknowns > 0 and audit.reruns > 0
        assert audit.unknown_ran > 0 and audit.unknown_never_ran > 0 and result.kills_with_open_model_attempt > 0
        assert audit.uncommitted_reads > 0  # kills landed between an all-READ step's calls and its commit


@pytest.mark.slow
async def test_sqlite_journal_survives_kill9_at_any_moment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Invariants (SQLite file shared by concurrent worker processes), after >= EUDAIMON_SOAK_KILLS
    SIGKILLs landing inside tools, model calls and anywhere else:
    no WRITE / IRREVERSIBLE call executed twice unless an operator asked retry=True for it;
    READ / idempotent calls re-executed only after an interrupted attempt, with the same key;
    every execution carries sha256(run_id:call_id) and a committed intent for its attempt,
    except a READ run in a process that died before its step's one commit;
    every journal is gap-free, duplicate-free and folds; every run completes (after
    reconciliation); every tool_outcome_unknown names exactly an ambiguous call — one whose
    process died after its intent was committed."""
    await _soak(f"sqlite:///{tmp_path / 'soak.db'}", tmp_path, "sqlite", capsys)


@pytest.mark.slow
@pytest.mark.postgres
async def test_postgres_journal_survives_kill9_at_any_moment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same invariants as the SQLite soak, with the journal and the leases in PostgreSQL
    (one fresh schema, shared by every worker process): kill -9 never loses a committed event,
    never lets a WRITE / IRREVERSIBLE call run twice, and never strands a run."""
    with scratch_pg_schema("soak") as spec:
        await _soak(spec, tmp_path, "postgres", capsys)


@pytest.mark.slow
async def test_the_soak_catches_a_wrongly_rerun_write(tmp_path: Path) -> None:
    """The soak's own check: an agent that (wrongly) declares a WRITE tool idempotent lets
    recovery run it twice, and the audit must report that — else the soak proves nothing."""
    spec = f"sqlite:///{tmp_path / 'mutant.db'}"
    soak = Soak(spec, tmp_path, kills=30, label="mutant", seed=7, mutant="write-is-idempotent")
    result = await soak.run()
    store = open_store(spec)
    try:
        journals = {run: await store.load(run) for run in result.runs}
    finally:
        await store.close()
    audit = audit_runs(journals, executions_of(soak.ledger_dir, result.dead), result.dead)
    assert any("non-idempotent write" in problem for problem in audit.problems), audit.problems
