"""`eudaimon runs effects RUN_ID [--json]`: what a run did to the world, one row per call whose
effect is not READ (`core.run_effects`), read from the journal alone."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from eudaimon.cli._common import (
    JsonOption,
    RunArgument,
    StoreOption,
    fail,
    load_events,
    out,
    resolve_store_url,
    run_async,
    with_store,
)
from eudaimon.cli._escape import json_visible, shown
from eudaimon.core.run_effects import EffectOutcome, RunEffect, effect_as_dict, run_effects

_OUTCOMES = {
    EffectOutcome.DONE: "done",
    EffectOutcome.COMMITTED: "committed in datasource",
    EffectOutcome.IN_DOUBT: "in doubt (awaiting reconciliation)",
    EffectOutcome.RECONCILED: "reconciled",
    EffectOutcome.DENIED: "denied",
    EffectOutcome.NEVER_RAN: "never ran",
    EffectOutcome.RUNNING: "running",
    EffectOutcome.AWAITING_APPROVAL: "awaiting approval",
}


def register(runs: typer.Typer) -> None:
    """Add `effects` to the `runs` group."""
    runs.command("effects")(effects)


def effects(run_id: RunArgument, store: StoreOption = None, as_json: JsonOption = False) -> None:
    """List a run's effects: every call that is not READ, with its effect class, datasource,
    idempotency key, attempts, outcome, the approval behind it and its result."""
    url = resolve_store_url(store)
    events = run_async(with_store(url, lambda journal: load_events(journal, run_id), read_only=True))
    if not events:
        fail(f"no run {run_id} in this store")
    rows = run_effects(events)
    if as_json:
        text = json.dumps(
            {"run_id": run_id, "effects": [effect_as_dict(r) for r in rows]}, ensure_ascii=False, indent=2
        )
        typer.echo(json_visible(text))
        return
    console = out()
    if not rows:
        console.print(shown(f"run {run_id} had no effects: no call that is not READ"))
        return
    table = Table(title=f"Effects of {run_id}")
    for column in ("seq", "tool", "effect", "datasource", "key", "attempts", "outcome", "approval", "result"):
        table.add_column(column)
    for row in rows:
        table.add_row(*(shown(cell, newlines=False) for cell in _cells(row)))
    console.print(table)


def outcome_text(row: RunEffect) -> str:
    """The outcome in words: reconciled says by whom and with what; recovered says so."""
    text = _OUTCOMES[row.outcome]
    if row.outcome is EffectOutcome.COMMITTED and row.recovered:
        text += " (read back by recovery)"
    if row.reconciled_by is not None or row.reconciled_with is not None:
        text += f" by {row.reconciled_by or 'an operator'} with {row.reconciled_with!r}"
    if row.outcome is EffectOutcome.DENIED and row.denied_reason:  # "denied: denied by …" reads twice
        text = row.denied_reason if row.denied_reason.startswith("denied") else f"{text}: {row.denied_reason}"
    if row.is_error and row.outcome in (EffectOutcome.DONE, EffectOutcome.COMMITTED):
        text += " (error)"
    return text


def approval_text(row: RunEffect) -> str:
    a = row.approval
    if a is None:
        return ""
    if a.approved is None:
        return f"asked: {a.reason}"
    said = "approved" if a.approved else "denied"
    text = f"{said} by {a.by or 'someone'}" + (f" at {a.decided_at:%Y-%m-%d %H:%M:%S}" if a.decided_at else "")
    if a.edited_from is not None:
        text += f", edited from {json.dumps(a.edited_from, ensure_ascii=False)}"
    return text


def _cells(row: RunEffect) -> tuple[str, ...]:
    result = row.result if row.result is not None else ""
    return (
        "" if row.started_seq is None else str(row.started_seq),
        row.tool,
        row.effect,
        row.datasource or "",
        (row.idempotency_key or "")[:16],
        str(row.attempts),
        outcome_text(row),
        approval_text(row),
        result if len(result) <= 60 else result[:59] + "…",
    )
