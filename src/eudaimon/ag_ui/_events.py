"""A run's journal as AG-UI events: the one mapping between eudaimon's events and AG-UI's.

Built from journal events only, never from live deltas, so a client that reconnects gets the
very same events again from the journal (and a run driven by another process, or resumed after
a crash, looks the same as one driven here). A model call's answer is one text message
(`TEXT_MESSAGE_START`/`CONTENT`/`END`, its id the journal message's id) and its tool calls
(`TOOL_CALL_START`/`ARGS`/`END`); a result is `TOOL_CALL_RESULT`; approvals, denials and unknown
outcomes are `CUSTOM` events named `eudaimon.*`; what a UI shows as the run's state (status,
steps, usage, cost, calls waiting) is a `STATE_SNAPSHOT` first and a `STATE_DELTA` (JSON Patch)
whenever it changes. The stream ends with `RUN_FINISHED` (its `result` the answer; an
`interrupt` outcome naming each call that waits for approval; `cancelled`) or `RUN_ERROR`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from eudaimon.core.edits import edit_text
from eudaimon.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelCalled,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
)
from eudaimon.core.state import RunState, Status

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}},
    "required": ["approved"],
}
"""What a client sends back, as a `resume` entry's payload, to decide a call that waits."""


def view(state: RunState) -> dict[str, Any]:
    """The run's state as AG-UI's shared state: what a UI shows beside the conversation."""
    return {
        "status": state.status.value,
        "steps": state.steps,
        "usage": {"input_tokens": state.usage.input_tokens, "output_tokens": state.usage.output_tokens},
        "cost_usd": state.cost_usd if state.cost_known else None,
        "awaiting_approval": [c.id for c in state.awaiting_approval()],
        "unknown_outcomes": [c.id for c in state.unknown_outcomes()],
    }


def delta(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch (RFC 6902) from one view to the next: a `replace` per changed key."""
    return [
        {"op": "replace", "path": f"/{key}", "value": value} for key, value in after.items() if before.get(key) != value
    ]


def started(thread_id: str, run_id: str, state: RunState) -> list[BaseEvent]:
    return [RunStartedEvent(thread_id=thread_id, run_id=run_id), StateSnapshotEvent(snapshot=view(state))]


def events_of(event: Event) -> Iterator[BaseEvent]:
    """The AG-UI events one journal event stands for (none for bookkeeping events)."""
    data = event.data
    if isinstance(data, ModelCalled):
        message = data.message
        message_id = message.id or f"{event.run_id}:{event.seq}"  # a model that names no message
        if message.content:
            yield TextMessageStartEvent(message_id=message_id, role="assistant")
            yield TextMessageContentEvent(message_id=message_id, delta=message.content)
            yield TextMessageEndEvent(message_id=message_id)
        for call in message.tool_calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            yield ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name, parent_message_id=message_id)
            if arguments:
                yield ToolCallArgsEvent(tool_call_id=call.id, delta=arguments)
            yield ToolCallEndEvent(tool_call_id=call.id)
    elif isinstance(data, ToolCompleted):
        yield _result(event, data.call_id, data.output)
    elif isinstance(data, ToolDenied):
        yield _result(event, data.call_id, f"denied: {data.reason}")
    elif isinstance(data, ToolReconciled) and data.output is not None:
        yield _result(event, data.call_id, data.output)
    elif isinstance(data, ApprovalRequested | ApprovalDecided | ToolOutcomeUnknown):
        yield CustomEvent(name=f"eudaimon.{event.type}", value={"seq": event.seq, **_fields(data)})


def _result(event: Event, call_id: str, content: str) -> ToolCallResultEvent:
    return ToolCallResultEvent(
        message_id=f"{event.run_id}:{event.seq}", tool_call_id=call_id, content=content or "(no output)", role="tool"
    )


def _fields(data: ApprovalRequested | ApprovalDecided | ToolOutcomeUnknown) -> dict[str, Any]:
    if isinstance(data, ApprovalRequested):
        return {"call_id": data.call_id, "tool": data.tool, "arguments": data.arguments, "reason": data.reason}
    if isinstance(data, ApprovalDecided):
        fields = {"call_id": data.call_id, "approved": data.approved, "by": data.by, "note": data.note}
        if data.arguments is not None:  # who changed what, from what to what
            fields.update(
                arguments=data.arguments,
                original_arguments=data.original_arguments,
                edit=edit_text(data.original_arguments, data.arguments, 2000),
            )
        return fields
    return {"call_id": data.call_id, "tool": data.tool}


def finished(thread_id: str, run_id: str, state: RunState) -> BaseEvent:
    """How a stream ends: the run ended, or it waits for someone."""
    if state.status is Status.COMPLETED:
        result = state.structured_output if state.structured_output is not None else state.output
        return RunFinishedEvent(thread_id=thread_id, run_id=run_id, result=result)
    if state.status is Status.CANCELLED:
        return RunFinishedEvent(thread_id=thread_id, run_id=run_id, outcome=RunFinishedCancelledOutcome())
    if state.status is Status.AWAITING_APPROVAL:
        interrupts = [
            Interrupt(
                id=call.id,
                reason="tool_approval",
                message=f"approve {call.name}({json.dumps(call.arguments, default=str)})?",
                tool_call_id=call.id,
                response_schema=APPROVAL_SCHEMA,
            )
            for call in state.awaiting_approval()
        ]
        if interrupts:
            return RunFinishedEvent(
                thread_id=thread_id, run_id=run_id, outcome=RunFinishedInterruptOutcome(interrupts=interrupts)
            )
    if state.status is Status.AWAITING_RECONCILIATION or state.status is Status.AWAITING_APPROVAL:
        return RunErrorEvent(
            message=f"run {run_id} waits for an operator to settle calls of unknown outcome "
            f"({', '.join(c.id for c in state.unknown_outcomes()) or 'in a child run'}): see /v1/runs/{run_id}",
            code=state.status.value,
        )
    return RunErrorEvent(message=state.error or state.status.value, code=state.status.value)
