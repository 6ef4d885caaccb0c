"""Time in a Temporal run: approval deadlines and durable waits as Temporal timers.

Locally a deadline or a wake is journaled and fired by whichever process sweeps the store
(`runtime.process.timers`); a run driven by a workflow is the workflow's alone, so the sweepers leave
it be and the workflow keeps its own time. While the run waits (for a human, or a tool's
`RetryAfter`), the workflow waits on the decision OR a durable timer until the earliest time
due (`wait_for_decision_or_due`): no worker slot is held, and the timer outlives every worker.
When it fires, the loop goes round again and its own `fire_due` journals what fell due (the
pure `core.due.due_events` read with the workflow's clock, appended by the `eudaimon.append`
activity), exactly once: the workflow is the run's only writer.

A tool's `RetryAfter` crosses the activity boundary as the activity's result
(`{"retry_after": {"seconds", "reason"}}`, `wait_result`) and is raised again as itself in the
workflow (`waiting_in`), where the loop journals `tool_waiting`.

A tool's wait due sooner than `SHORT_WAIT` sleeps in the worker instead (the `eudaimon.sleep_until`
local activity, raced against the decision; an approval deadline keeps its timer,
`_awaits_a_timed_decision`): the Temporal server fires no timer sooner than its
`history.timerProcessorMaxTimeShift` (1 s by default) after it is set, so a 10 ms `RetryAfter`
on a timer woke ~1 s late. A local activity runs inside the workflow's task: no server timer,
nothing in history but its marker when it ends.

Histories recorded before durable timers replay without them (`TIMERS_PATCH`); those recorded
before short waits slept in the worker replay their short timers (`SHORT_WAITS_PATCH`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from eudaimon.core.state import CallStatus, RunState
from eudaimon.tools import RetryAfter

TIMERS_PATCH = "eudaimon.durable-timers"
"""Histories recorded before the workflow kept its own time replay waiting for decisions only."""

WAIT = "retry_after"
"""The key of a tool activity's result that says the tool raised `RetryAfter` (`wait_result`)."""

SHORT_WAITS_PATCH = "eudaimon.short-waits-sleep-in-the-worker"
"""Histories recorded before a short wait slept in the worker replay it on a Temporal timer.
Asked only when a wait is short, so runs that never make one record no marker. A run the engine
starts with every patch (`RunInput.patched`) asks too: the v4 histories were recorded with
every patch then, and with short waits on timers."""

SHORT_WAIT = timedelta(seconds=1)
"""A wait due sooner than this sleeps in the worker (`SLEEP_UNTIL`), not on a Temporal timer.
Why 1 s: the Temporal server's default `history.timerProcessorMaxTimeShift` — it moves every
timer due sooner than that to about that far ahead, so a shorter timer fires up to 1 s late.
A sleep in the worker holds one of the worker's local-activity slots (and keeps the workflow's
task open) for at most this long; a longer wait keeps the durable timer, which holds nothing
and outlives every worker."""

SLEEP_UNTIL = "eudaimon.sleep_until"
"""The local activity that sleeps until a short wait's due time (`Activities.sleep_until`)."""

_SLEEP_TIMEOUT = SHORT_WAIT + timedelta(seconds=10)
"""Bounds a sleep in the worker: its due time plus ample room for a slow, busy worker."""

_SLACK = timedelta(milliseconds=5)
"""Added to each timer, so the workflow's clock has passed the due time when it fires."""

_SLEEP_SLACK = timedelta(milliseconds=1)
"""Added to a sleep in the worker: the workflow's clock after it is the sleep's end by the
worker's own clock, which the sleep read, so a millisecond suffices (were it short, the loop
sleeps again for what is left)."""


def next_due(state: RunState) -> datetime | None:
    """The earliest approval deadline or wake of a call the run waits on; None when none."""
    times: list[datetime] = []
    for progress in state.calls.values():
        if progress.status is CallStatus.AWAITING_APPROVAL and progress.deadline is not None:
            times.append(progress.deadline)
        elif progress.status is CallStatus.WAITING and progress.wake_at is not None:
            times.append(progress.wake_at)
    return min(times, default=None)


async def wait_for_decision_or_due(state: RunState, decided: Callable[[], bool], *, patched: bool = False) -> None:
    """Wait until `decided()` or the earliest deadline/wake of the run has come.

    A run with nothing timed waits for a decision alone, as before durable timers, and makes
    no patch marker: histories of runs without deadlines are unchanged; nor does a run started
    with every patch (`patched`, `RunInput.patched`)."""
    due = next_due(state) if not state.status.is_terminal else None
    if due is None or not (patched or workflow.patched(TIMERS_PATCH)):
        await workflow.wait_condition(decided)
        return
    while not decided():
        left = due - workflow.now()
        if left <= timedelta(0):
            return
        if (
            left < SHORT_WAIT
            and not _awaits_a_timed_decision(state)
            and workflow.patched(SHORT_WAITS_PATCH)
            and await _slept_in_worker(due, decided)
        ):
            continue  # slept, or decided: the loop's `fire_due` journals what is due now
        try:
            await workflow.wait_condition(decided, timeout=left + _SLACK)
        except TimeoutError:
            continue  # the timer fired: the loop's `fire_due` journals what is due now


def _awaits_a_timed_decision(state: RunState) -> bool:
    """Whether a call awaits approval with a deadline: its wait keeps the Temporal timer, late or
    not. A sleep in the worker keeps the workflow's task open, and a decision that arrives then
    is taken when the sleep ends — past the deadline, so an approval sent in time would be
    refused; a timer fired late only gives the human a little more time."""
    return any(p.status is CallStatus.AWAITING_APPROVAL and p.deadline is not None for p in state.calls.values())


async def _slept_in_worker(due: datetime, decided: Callable[[], bool]) -> bool:
    """Sleep until `due` in this worker (`SLEEP_UNTIL`, a local activity), or until `decided()`
    first, which cancels the sleep. False when the sleep failed (a worker that does not register
    it): the caller then waits on a Temporal timer, late but sure."""
    sleep = workflow.start_local_activity(
        SLEEP_UNTIL,
        (due + _SLEEP_SLACK).isoformat(),
        start_to_close_timeout=_SLEEP_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=1),
    )
    await workflow.wait_condition(lambda: sleep.done() or decided())
    if not sleep.done():
        sleep.cancel()
    try:
        await sleep
    except ActivityError:
        return decided()  # cancelled by the decision, or the sleep failed
    return True


def wait_result(exc: RetryAfter) -> dict[str, Any]:
    """A tool's `RetryAfter` as its activity's result: a wait is no failure (Temporal neither
    retries nor logs it as one); the loop journals it and the workflow's timer wakes the call."""
    return {WAIT: {"seconds": exc.seconds, "reason": exc.reason}}


def waiting_in(result: object) -> RetryAfter | None:
    """The `RetryAfter` a tool raised on a worker, from its activity's result; else None."""
    if not isinstance(result, dict) or not isinstance(result.get(WAIT), dict):
        return None
    wait = result[WAIT]
    seconds = wait.get("seconds")
    reason = wait.get("reason")
    return RetryAfter(
        float(seconds) if isinstance(seconds, int | float) else 0.0, reason if isinstance(reason, str) else None
    )


def decision_time(state: RunState) -> datetime | None:
    """The time a decision is judged at in the workflow: its own clock (never the host's,
    which a replay would read differently), only when a call has a deadline to judge it by."""
    if any(p.deadline is not None for p in state.calls.values()):
        return workflow.now()
    return None
