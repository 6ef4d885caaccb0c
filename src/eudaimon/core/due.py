"""What falls due in a run at a time: approval deadlines and durable waits, as the events that
record them. Pure: the runtime's loop (a run resumed after its time) and the stores' sweepers
(`runtime.process.timers`) journal what this returns."""

from __future__ import annotations

from datetime import datetime, timedelta

from eudaimon.core.events import ApprovalTimedOut, EventData, RunCancelled, ToolWoke
from eudaimon.core.state import CallProgress, CallStatus, RunState

BY = "deadline"
"""Who an `approval_timed_out` (and the cancel it may bring) names as its decider."""


def waited_for(progress: CallProgress) -> str:
    """How long the human had, as the model and the operator read it ("no decision within 2h")."""
    if progress.timeout_s is None:
        return "its deadline"
    return _duration(timedelta(seconds=progress.timeout_s))


def due_events(state: RunState, at: datetime) -> list[EventData]:
    """What is due in `state` at `at`: a timeout for each call whose approval deadline passed,
    a wake for each waiting call whose time came (in the batch's order)."""
    if state.status.is_terminal:
        return []
    due: list[EventData] = []
    cancel: str | None = None
    for call_id, progress in state.calls.items():
        if progress.status is CallStatus.AWAITING_APPROVAL and progress.deadline is not None:
            if progress.deadline <= at:
                note = f"no decision within {waited_for(progress)}"
                action = progress.on_timeout
                due.append(ApprovalTimedOut(call_id=call_id, deadline=progress.deadline, action=action, note=note))
                if action == "cancel" and cancel is None:
                    cancel = f"the approval of call {call_id} timed out: {note}"
        elif progress.status is CallStatus.WAITING and progress.wake_at is not None and progress.wake_at <= at:
            due.append(ToolWoke(call_id=call_id))
    if cancel is not None:
        due.append(RunCancelled(reason=cancel, by=BY))
    return due


def _duration(span: timedelta) -> str:
    seconds = max(0.0, span.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size < 1:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s" if seconds < 60 else f"{round(seconds)}s"
