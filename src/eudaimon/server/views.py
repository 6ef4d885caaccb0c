"""What the API answers: runs, events and states as JSON-ready dicts, built from the journal.

Everything here is read from events and the fold; nothing is kept beside them. Text a model or
a tool wrote goes out as plain JSON strings: the inspector renders it as text, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from eudaimon.core.codec import event_to_dict
from eudaimon.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    ApprovalTimedOut,
    Event,
    ModelCalled,
    RunCancelled,
    ToolReconciled,
    ToolStarted,
)
from eudaimon.core.messages import JsonObject, Message, Usage
from eudaimon.core.run_index import RunRow
from eudaimon.core.state import RunState
from eudaimon.stores.index import DayRow


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def spent_dict(state: RunState) -> dict[str, Any]:
    """What a run spent, as a protocol answer tells its caller (A2A's task metadata, MCP's
    result `_meta`): its tokens, and `cost_usd` when its calls were priced."""
    spent: dict[str, Any] = dict(usage_dict(state.usage))
    if state.cost_known:
        spent["cost_usd"] = state.cost_usd
    return spent


def message_dict(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "role": message.role.value,
        "content": message.content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
        "is_error": message.is_error,
    }


def unpriced_reason(state: RunState) -> str:
    """Why a run's cost is unknown, in words (the API's `unpriced`)."""
    if state.steps == 0:
        return "no model call has been priced yet"
    return f"no price is known for {state.model or 'its model'}: give the agent a cost_model that knows it"


def state_dict(state: RunState) -> dict[str, Any]:
    """The folded state, as `GET /v1/runs/{id}/state` answers it."""
    return {
        "run_id": state.run_id,
        "agent": state.agent,
        "status": state.status.value,
        "seq": state.next_seq - 1,
        "thread_id": state.thread_id,
        "input": state.input,
        "output": state.output,
        "error": state.error,
        "steps": state.steps,
        "usage": usage_dict(state.usage),
        "cost_usd": state.cost_usd if state.cost_known else None,
        "unpriced": None if state.cost_known else unpriced_reason(state),
        "messages": [message_dict(m) for m in state.messages],
        "pending": [{"call_id": c.id, "tool": c.name, "arguments": c.arguments} for c in state.pending],
        "calls": {call_id: progress.status.value for call_id, progress in state.calls.items()},
        "parent": None if state.parent is None else {"run_id": state.parent.run_id, "seq": state.parent.seq},
        "version": state.version,
        "replay_of": state.replay_of,
        "agent_changes": [{"version": v, "changes": list(c)} for v, c in state.agent_changes],
    }


def run_dict(state: RunState, events: Sequence[Event]) -> dict[str, Any]:
    """A run as `GET /v1/runs/{id}` answers it: its state plus what only the events tell (when,
    usage per step, why a call waits, who decided what)."""
    reasons: dict[str, str] = {}
    asked: dict[str, JsonObject | str] = {}
    ran_with: dict[str, Any] = {}
    steps: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    for event in events:
        data = event.data
        if isinstance(data, ModelCalled):
            steps.append(
                {
                    "step": data.step,
                    "seq": event.seq,
                    "model": data.model,
                    "usage": usage_dict(data.usage),
                    "cost_usd": data.cost_usd,
                    "duration_ms": data.duration_ms,
                }
            )
        elif isinstance(data, ApprovalRequested):
            reasons[data.call_id] = data.reason
            asked[data.call_id] = data.arguments
        elif isinstance(data, ToolStarted) and data.arguments:  # journals before the field read {}
            ran_with[data.call_id] = data.arguments
        elif isinstance(data, ApprovalDecided):
            edit = {}
            if data.arguments is not None:  # journals before `original_arguments`: the arguments asked about
                original = data.original_arguments or _as_object(asked.get(data.call_id, ""))
                edit = {
                    "arguments": data.arguments,
                    "original_arguments": original if isinstance(original, dict) else None,
                }
            decisions.append(
                _decision(event, "approval", data.call_id, by=data.by, approved=data.approved, note=data.note, **edit)
            )
        elif isinstance(data, ApprovalTimedOut):
            decisions.append(
                _decision(
                    event,
                    "approval",
                    data.call_id,
                    by="deadline",
                    approved=False,
                    note=data.note,
                    deadline=data.deadline.isoformat(),
                    timed_out=True,
                )
            )
        elif isinstance(data, ToolReconciled):
            decisions.append(
                _decision(event, "reconcile", data.call_id, by=data.by, output=data.output, retry=data.retry)
            )
        elif isinstance(data, RunCancelled):
            decisions.append(_decision(event, "cancel", None, by=data.by, note=data.reason))
    view = state_dict(state)
    view.pop("seq")
    view.update(
        event_count=state.next_seq,
        created_at=events[0].at.isoformat() if events else None,
        updated_at=events[-1].at.isoformat() if events else None,
        pending_approvals=[
            {
                "call_id": c.id,
                "tool": c.name,
                "arguments": c.arguments,
                "reason": reasons.get(c.id, ""),
                **deadline_dict(state, c.id),
            }
            for c in state.awaiting_approval()
        ],
        waiting=[
            {"call_id": c.id, "tool": c.name, "wake_at": _iso(state.calls[c.id].wake_at)} for c in state.waiting_calls()
        ],
        wake_at=_iso(min((w for w in (state.calls[c.id].wake_at for c in state.waiting_calls()) if w), default=None)),
        # An operator reconciles what the tool was started with (after middleware), as an object.
        unknown_outcomes=[
            {"call_id": c.id, "tool": c.name, "arguments": _as_object(ran_with.get(c.id, c.arguments))}
            for c in state.unknown_outcomes()
        ],
        step_usage=steps,
        decisions=decisions,
    )
    return view


def deadline_dict(state: RunState, call_id: str) -> dict[str, Any]:
    """A waiting approval's deadline and what it does then (`deadline` None: no deadline)."""
    progress = state.calls.get(call_id)
    if progress is None or progress.deadline is None:
        return {"deadline": None, "on_timeout": None}
    return {"deadline": progress.deadline.isoformat(), "on_timeout": progress.on_timeout}


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _as_object(arguments: JsonObject | str) -> JsonObject | str:
    """Arguments journaled as the model's JSON text, decoded: a call was started only once its
    arguments decoded to an object, so that is what the tool got."""
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except ValueError:
            return arguments
        return decoded if isinstance(decoded, dict) else arguments
    return arguments


def _decision(event: Event, kind: str, call_id: str | None, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "seq": event.seq, "at": event.at.isoformat(), "call_id": call_id, **fields}


def row_dict(row: RunRow, driverless: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A run as listings show it, from its row of the store's index; `driverless` holds the
    running runs no process drives now (`runtime.process.drivers.driverless_runs`)."""
    return {
        "run_id": row.run_id,
        "agent": row.agent,
        "thread_id": row.thread_id,
        "status": row.status,
        "event_count": row.event_count,
        "last_event_type": row.last_event_type,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "input_preview": row.input_preview,
        "output_preview": row.output_preview,
        "error_preview": row.error_preview,
        "cost_usd": row.cost,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "duration_ms": row.duration_ms,
        "tools": list(row.tools),
        "parent_run_id": row.parent_run_id,
        "version": row.version,
        "replay_of": row.replay_of,
        "no_driver": row.run_id in driverless,
    }


def day_dict(day: DayRow) -> dict[str, Any]:
    return {
        "agent": day.agent,
        "day": day.day,
        "runs": day.runs,
        "by_status": dict(day.by_status),
        "cost_usd": day.cost_usd,
        "input_tokens": day.input_tokens,
        "output_tokens": day.output_tokens,
        "p50_duration_ms": day.p50_duration_ms,
        "p95_duration_ms": day.p95_duration_ms,
        "error_rate": day.error_rate,
    }


def event_dict(event: Event) -> dict[str, Any]:
    """The journal row as stored (`eudaimon.core.codec`): `v`, `run_id`, `seq`, `at`, `type`, fields."""
    return event_to_dict(event)
