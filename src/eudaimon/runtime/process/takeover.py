"""A run taken over from a driver that was lost: told in the journal and in the log.

A driver that takes a run's lease finds the run as its last driver left it. When that driver
stopped mid-run (the run is `running` and its last event is one a driver writes, not a person's
decision or a queued start), it crashed or stalled: its lease lapsed rather than being given up.
The new driver journals `run_taken_over` (who took over, after how long, from whom if this
process saw the lost driver's lease), so the inspector can end the interrupted span where the
process was lost, and logs one line a person can read.
"""

from __future__ import annotations

import logging
from datetime import datetime

from eudaimon.core.events import Event, RunStarted, RunTakenOver
from eudaimon.core.state import RunState, Status

logger = logging.getLogger("eudaimon.recovery")

PAUSED_BY_PEOPLE = frozenset({"run_queued", "approval_decided", "tool_reconciled"})
"""Last events after which a run waits for a driver without one having been lost."""


def interrupted(state: RunState, last: Event | None) -> bool:
    """Whether the run's last driver was lost mid-run (see the module's docstring)."""
    if last is None or state.status is not Status.RUNNING or last.type in PAUSED_BY_PEOPLE:
        return False
    # A fork, made by a person, waits for its first driver: no driver was lost.
    return not (isinstance(last.data, RunStarted) and last.data.parent is not None)


def took_over(owner: str, previous_owner: str | None, last: Event, now: datetime) -> RunTakenOver:
    orphaned = max(0, round((now - last.at).total_seconds() * 1000))
    return RunTakenOver(owner=owner, orphaned_ms=orphaned, previous_owner=previous_owner, interrupted_seq=last.seq)


def seconds(ms: int) -> str:
    """A duration in the inspector's style (`millis` in its shared.js): whole ms under a second,
    seconds to one decimal under a minute, then minutes and seconds, then hours and minutes."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    s = round(ms / 1000)
    return f"{s // 60} min {s % 60:02d} s" if s < 3600 else f"{s // 3600} h {s % 3600 // 60:02d} min"


def taken_over_line(data: RunTakenOver, run_id: str | None = None) -> str:
    """The takeover in one line: run, who took over, from whom, how long it had no driver."""
    run = f"run {run_id} " if run_id else ""
    lost = data.previous_owner or "a driver whose lease had lapsed"
    after = f" (its last event #{data.interrupted_seq})" if data.interrupted_seq >= 0 else ""
    return f"{run}taken over by {data.owner} from {lost}{after}, orphaned for {seconds(data.orphaned_ms)}"


def log_takeover(run_id: str, data: RunTakenOver) -> None:
    logger.warning("%s", taken_over_line(data, run_id))
