"""The journal contract every store keeps (DESIGN §5).

`append(run_id, expected_seq, events)` is atomic and a compare-and-append: it succeeds only
when `expected_seq` is the run's next seq, else it raises `ConcurrencyConflict` and writes
nothing. That check is the fence that lets exactly one process append a `tool_started`
intent, and so execute a call. Events of one append carry consecutive seqs starting at
`expected_seq`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from eudaimon.core.errors import CorruptEvent
from eudaimon.core.events import Event, RunStarted


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a store knows of a run without folding it."""

    run_id: str
    agent: str
    thread_id: str | None
    created_at: datetime
    updated_at: datetime
    event_count: int
    last_event_type: str


@runtime_checkable
class EventStore(Protocol):
    async def append(self, run_id: str, expected_seq: int, events: Sequence[Event]) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`."""
        ...

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run."""
        ...

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first."""
        ...

    async def close(self) -> None: ...


def check_batch(run_id: str, expected_seq: int, events: Sequence[Event]) -> None:
    """Refuse a batch whose seqs or run ids do not follow on from `expected_seq`."""
    for offset, event in enumerate(events):
        if event.run_id != run_id or event.seq != expected_seq + offset:
            raise CorruptEvent(
                run_id,
                event.seq,
                f"batch event {offset} is run {event.run_id} seq {event.seq}; expected seq {expected_seq + offset}",
                event_type=event.type,
            )
    if expected_seq == 0 and events and not isinstance(events[0].data, RunStarted):
        raise CorruptEvent(run_id, 0, "a run's first event must be run_started", event_type=events[0].type)


def summary_fields(events: Sequence[Event]) -> tuple[str, str | None]:
    """The agent and thread a batch starting a run names."""
    first = events[0].data
    if isinstance(first, RunStarted):
        return first.agent, first.thread_id
    return "", None
