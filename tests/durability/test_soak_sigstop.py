"""The kill -9 soak with stalls: some workers are SIGSTOPped instead, replaced, then woken.

Everything `test_soak_kill9.py` checks still holds (the same audit, with the stopped processes
counted as dead: to the workers that took their runs over, they were). On top: a stopped worker
is woken only after its runs were taken over, their ambiguous calls reconciled (every other time
with `retry=True`) and retried; once woken it must not perform any WRITE or IRREVERSIBLE
effect — it stops at its next commit or effect with `LeaseLost` (or loses the append race).
Stops land where the stalled-process attack puts them: right after a WRITE/IRREVERSIBLE intent
is committed, inside `on_tool_call`, inside a tool after its ledger line, inside a model call.

`EUDAIMON_SOAK_STALLS` (default 20) and `EUDAIMON_SOAK_STALL_KILLS` (default 30) per backend.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest
from _journal_checks import audit_runs
from _proc_support import Execution, open_store, scratch_pg_schema
from _soak_driver import Soak, SoakResult, WorkerHung, executions_of

STALLS = int(os.environ.get("EUDAIMON_SOAK_STALLS", "20"))
KILLS = int(os.environ.get("EUDAIMON_SOAK_STALL_KILLS", "30"))
ONCE_ONLY = frozenset({"write", "send"})


def effects_after_waking(result: SoakResult, executions: list[Execution]) -> list[Execution]:
    """WRITE/IRREVERSIBLE executions a stopped process performed after it was woken."""
    by_incarnation: dict[str, list[Execution]] = defaultdict(list)
    for execution in executions:
        by_incarnation[execution.incarnation].append(execution)
    late: list[Execution] = []
    for incarnation, written in result.stall_marks.items():
        late += [e for e in by_incarnation[incarnation][written:] if e.tool in ONCE_ONLY]
    return late


async def _soak(spec: str, tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    soak = Soak(spec, tmp_path, kills=KILLS, stalls=STALLS, runs_per_worker=1, label=f"stall-{backend}", seed=STALLS)
    result = await soak.run()
    executions = executions_of(soak.ledger_dir, result.dead)
    store = open_store(spec)
    try:
        journals = {run: await store.load(run) for run in result.runs}
    finally:
        await store.close()
    audit = audit_runs(journals, executions, result.dead)
    late = effects_after_waking(result, executions)
    with capsys.disabled():
        print(
            f"\n[stall soak {backend}] {result.stalls} stops {dict(result.stall_modes)}, woken exits "
            f"{dict(result.woken_exits)}; {result.kills} kills; {result.incarnations} processes; "
            f"{audit.runs} runs, {audit.executions} executions, {audit.unknowns} unknown outcomes, "
            f"{result.reconciled_retry} retried by the operator; {len(late)} effects after waking "
            f"in {result.seconds:.1f}s"
        )
    assert not late, f"stopped processes acted after they were replaced and woken: {late}"
    assert not audit.problems, "\n".join(audit.problems[:30])
    assert audit.statuses == {"completed": len(result.runs)}
    assert result.stalls >= STALLS and result.kills >= KILLS
    assert sum(result.woken_exits.values()) == result.stalls
    if STALLS >= 12:  # worth its time only if stops landed where the attack puts them
        assert result.stall_modes["stall-intent"] > 0 and result.woken_exits["lease-lost"] > 0
        assert result.reconciled_retry > 0


@pytest.mark.slow
async def test_sqlite_stopped_workers_never_act_after_they_are_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Invariants (SQLite), with >= EUDAIMON_SOAK_STALLS workers stopped and woken after their
    runs were taken over and retried, among >= EUDAIMON_SOAK_STALL_KILLS kill -9s: no stopped
    worker performs a WRITE / IRREVERSIBLE effect after waking; every woken worker ends (with
    LeaseLost, a lost append, or nothing left to do); and every invariant of the kill -9 soak."""
    await _soak(f"sqlite:///{tmp_path / 'stall.db'}", tmp_path, "sqlite", capsys)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.xfail(
    raises=WorkerHung,
    strict=False,
    reason="open finding: in one full run a successor worker waited 90 s on PostgreSQL right after a model "
    "call while another worker of its lane was stopped (no effect was repeated). Not a lock of the stopped "
    "worker, as far as found: its statements are single autocommit ones but for a run's first append, and a "
    "session stopped inside a transaction is now ended by the server (test_a_stopped_transaction_releases_"
    "its_locks.py); not reproduced since",
)
async def test_postgres_stopped_workers_never_act_after_they_are_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same invariants with the journal and the leases in PostgreSQL (one fresh schema)."""
    with scratch_pg_schema("stall") as spec:
        await _soak(spec, tmp_path, "postgres", capsys)
