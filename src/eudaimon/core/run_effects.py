"""`run_effects`: what a run did to the world, one row per call whose effect is not READ.

Computed from the journal alone, so the server, the CLI and the inspector list the same
effects, for a live run, a crashed one, or one finished years ago. A row says which tool, its
effect class and datasource, the idempotency key, how many attempts, how it ended, the
approval behind it, and its result; `started_seq` and `ended_seq` link it to the timeline.

Outcomes (`EffectOutcome`): done; committed in its datasource (`recovered` when recovery read
the result back after a crash); in doubt (awaiting an operator); reconciled by an operator;
denied; never ran (the run ended first); and, while the run is live, running or awaiting
approval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from eudaimon.core.events import (
    AgentReplaced,
    ApprovalDecided,
    ApprovalRequested,
    Event,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolStarted,
)
from eudaimon.core.fingerprint import tool_effects


class EffectOutcome(StrEnum):
    DONE = "done"
    COMMITTED = "committed"
    """Committed in its datasource, with its completion record."""
    IN_DOUBT = "in_doubt"
    RECONCILED = "reconciled"
    DENIED = "denied"
    NEVER_RAN = "never_ran"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectApproval:
    """The human decision behind a call: who, when, and what they changed."""

    reason: str = ""
    requested_at: datetime | None = None
    approved: bool | None = None
    by: str | None = None
    decided_at: datetime | None = None
    note: str | None = None
    arguments: Any = None
    """The arguments the call ran with, when the approver edited them."""
    edited_from: Any = None
    """The arguments the model proposed, when the approver edited them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEffect:
    """One call's effect on the world (see the module)."""

    call_id: str
    tool: str
    effect: str = "unknown"
    datasource: str | None = None
    idempotency_key: str | None = None
    attempts: int = 0
    outcome: EffectOutcome = EffectOutcome.NEVER_RAN
    recovered: bool = False
    """Committed before its process died: recovery read the result from the datasource."""
    reconciled_by: str | None = None
    reconciled_with: str | None = None
    """The output the operator recorded, or "retry" when they asked for the call to run again."""
    approval: EffectApproval | None = None
    result: str | None = None
    is_error: bool = False
    arguments: Any = None
    started_seq: int | None = None
    ended_seq: int | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    denied_reason: str | None = None


def run_effects(events: Iterable[Event], *, declared: Mapping[str, str] | None = None) -> tuple[RunEffect, ...]:
    """The effects of the run whose journal is `events` (in order), in the order the calls were
    first journaled; READ calls are left out.

    `declared` maps tool names to effect classes, for calls that never started (denied, or
    awaiting approval), whose journal rows do not name one; the run's own record of its tools
    (the fingerprint of `run_started` and of each `agent_replaced`, and its toolsets' tools)
    comes first. A call of a tool none names is "unknown", and listed.
    """
    rows: dict[str, RunEffect] = {}
    declared = dict(declared or {})
    ended = False
    for event in events:
        data = event.data
        match data:
            case RunStarted():
                declared.update(tool_effects(data.fingerprint))
                declared.update({t.name: t.effect for t in data.tools})
            case AgentReplaced():
                declared.update(tool_effects(data.fingerprint))
            case ApprovalRequested():
                row = rows.get(data.call_id) or RunEffect(
                    call_id=data.call_id, tool=data.tool, effect=declared.get(data.tool, "unknown")
                )
                approval = EffectApproval(reason=data.reason, requested_at=event.at)
                rows[data.call_id] = replace(
                    row, approval=approval, arguments=data.arguments, outcome=EffectOutcome.AWAITING_APPROVAL
                )
            case ApprovalDecided() if data.call_id in rows:
                row = rows[data.call_id]
                asked = row.approval or EffectApproval()
                edited = data.arguments is not None
                decided = replace(
                    asked,
                    approved=data.approved,
                    by=data.by,
                    decided_at=event.at,
                    note=data.note,
                    arguments=data.arguments if edited else None,
                    edited_from=row.arguments if edited else None,
                )
                outcome = EffectOutcome.NEVER_RAN if data.approved else EffectOutcome.DENIED
                rows[data.call_id] = replace(row, approval=decided, outcome=outcome)
            case ToolDenied():
                row = rows.get(data.call_id) or RunEffect(
                    call_id=data.call_id, tool=data.tool, effect=declared.get(data.tool, "unknown")
                )
                rows[data.call_id] = replace(
                    row, outcome=EffectOutcome.DENIED, denied_reason=data.reason, ended_seq=event.seq, ended_at=event.at
                )
            case ToolStarted():
                row = rows.get(data.call_id) or RunEffect(call_id=data.call_id, tool=data.tool)
                rows[data.call_id] = replace(
                    row,
                    effect=data.effect,
                    datasource=data.datasource,
                    idempotency_key=data.idempotency_key,
                    attempts=max(row.attempts, data.attempt),
                    arguments=data.arguments,
                    outcome=EffectOutcome.RUNNING,
                    started_seq=row.started_seq if row.started_seq is not None else event.seq,
                    started_at=row.started_at or event.at,
                )
            case ToolCompleted() if data.call_id in rows:
                row = rows[data.call_id]
                outcome = EffectOutcome.COMMITTED if data.datasource is not None else EffectOutcome.DONE
                rows[data.call_id] = replace(
                    row,
                    outcome=outcome,
                    recovered=data.recovered,
                    result=data.output,
                    is_error=data.is_error,
                    ended_seq=event.seq,
                    ended_at=event.at,
                )
            case ToolOutcomeUnknown() if data.call_id in rows:
                rows[data.call_id] = replace(rows[data.call_id], outcome=EffectOutcome.IN_DOUBT)
            case ToolReconciled() if data.call_id in rows:
                row = rows[data.call_id]
                if data.retry:
                    rows[data.call_id] = replace(row, reconciled_by=data.by, reconciled_with="retry")
                else:
                    rows[data.call_id] = replace(
                        row,
                        outcome=EffectOutcome.RECONCILED,
                        reconciled_by=data.by,
                        reconciled_with=data.output or "",
                        result=data.output or "",
                        ended_seq=event.seq,
                        ended_at=event.at,
                    )
            case RunCompleted() | RunFailed() | RunCancelled():
                ended = True
            case _:
                pass
    shown = tuple(row for row in rows.values() if row.effect != "read")
    if not ended:
        return shown
    unfinished = (EffectOutcome.RUNNING, EffectOutcome.AWAITING_APPROVAL)
    return tuple(replace(r, outcome=EffectOutcome.NEVER_RAN) if r.outcome in unfinished else r for r in shown)


def effect_as_dict(effect: RunEffect) -> dict[str, Any]:
    """`effect` as JSON-ready values (times in ISO 8601): what the API and `--json` print."""
    out: dict[str, Any] = {}
    for name in RunEffect.__slots__:
        value = getattr(effect, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, EffectApproval):
            value = {
                k: (v.isoformat() if isinstance(v, datetime) else v)
                for k in EffectApproval.__slots__
                for v in (getattr(value, k),)
            }
        elif isinstance(value, EffectOutcome):
            value = value.value
        out[name] = value
    return out
