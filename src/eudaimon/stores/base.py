"""The journal contract every store keeps (DESIGN §5).

`append(run_id, expected_seq, events)` is atomic and a compare-and-append: it succeeds only
when `expected_seq` is the run's next seq, else it raises `ConcurrencyConflict` and writes
nothing. That check is the fence that lets exactly one process append a `tool_started`
intent, and so execute a call. Events of one append carry consecutive seqs starting at
`expected_seq`.

Besides the journal a store keeps two derived things, both safe to lose:
- leases, named `run:<id>` or `thread:<id>`, so that one process drives a run (or a thread)
  at a time; a lease held by a crashed process simply expires;
- snapshots, the serialized state of a run at some seq (or of a thread), which make loading
  a long run cheap; deleting them changes only speed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from eudaimon.core.errors import CorruptEvent
from eudaimon.core.events import TERMINAL_TYPES, Event, RunQueued, RunStarted


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

    @property
    def is_finished(self) -> bool:
        return self.last_event_type in TERMINAL_TYPES


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as granted: `expires_in_s` is measured by the store's own clock when granted."""

    name: str
    owner: str
    expires_in_s: float


@dataclass(frozen=True, slots=True)
class Fence:
    """The lease a commit is made under: `append(..., fence=...)` lands only while `owner`
    still holds `name` unexpired, checked in the commit's own transaction.

    A driver checks its lease by its own clock before committing, but a process can stall
    (SIGSTOP, a VM pause, a long GC) between that check and the commit; meanwhile its lease
    lapses and another process takes the run over. The fence makes the store refuse the late
    commit (`LeaseLost`), so the stalled process never records an intent it would then act on.

    A lease that lapsed before the commit began (a busy process, a commit queued behind many
    others) but still names its owner, so that no one took it, is taken back by the commit for
    `ttl_s` (none when 0): a busy process keeps the runs nobody else took. One that lapsed while
    the commit held the store's write lock (the process stopped inside it) is refused.

    A store that took the lease back in a commit that landed calls `taken_back` (if given) with
    `time.monotonic()` read just before it sent that commit: the lease then holds for `ttl_s`
    from that moment at least, which the lease's keeper cannot otherwise know (a store that does
    not call it leaves the keeper's own, earlier, reckoning in place: safe, only stricter).
    """

    name: str
    owner: str
    ttl_s: float = 0.0
    taken_back: Callable[[float], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Snapshot:
    key: str
    """`run:<id>` or `thread:<id>`."""
    version: int
    """For a run, the seq of the last event folded into `data`."""
    data: str


@runtime_checkable
class EventStore(Protocol):
    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """Append `events` atomically if the run's next seq is `expected_seq`.

        A `snapshot` given along is saved in the same transaction, so taking one costs no commit.
        With a `fence`, the append lands only while its owner holds the lease unexpired, and
        raises `LeaseLost` (writing nothing) otherwise.
        """
        ...

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        """The run's events with seq > `after_seq`, in order; `[]` for an unknown run."""
        ...

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        """Runs, most recently updated first."""
        ...

    async def delete_run(self, run_id: str) -> None:
        """Remove a run's events, summary and snapshot (retention); unknown runs are ignored."""
        ...

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        """Take or renew the lease `name` for `owner` for `ttl_s` seconds.

        Raises:
            LeaseHeld: another owner holds it and it has not expired.
        """
        ...

    async def release_lease(self, name: str, owner: str) -> None:
        """Give the lease up, if `owner` holds it."""
        ...

    # A store may also offer, and every store here does (`runtime.process.leases` falls back to
    # `acquire_lease` one by one otherwise):
    #
    #     async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]
    #
    # renewing every (name, owner) in one statement, lapsed or not, wherever the lease still
    # names that owner (no one took it since); the result says, per lease, whether it did; and
    #
    #     async def lease_holders(self, names: Sequence[str]) -> dict[str, Lease]
    #
    # the leases among `names` held unexpired now, read without taking any (`runs show` and a
    # run's view say from it whether a process drives a running run; a store without it: unknown).

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` as the latest for its key unless a newer version is already kept."""
        ...

    async def load_snapshot(self, key: str) -> Snapshot | None: ...

    async def delete_snapshots(self) -> int:
        """Drop every snapshot; returns how many. Only speed changes."""
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
    if expected_seq == 0 and events and not isinstance(events[0].data, RunStarted | RunQueued):
        raise CorruptEvent(
            run_id, 0, "a run's first event must be run_started or run_queued", event_type=events[0].type
        )


def summary_fields(events: Sequence[Event]) -> tuple[str, str | None]:
    """The agent and thread a batch starting a run names."""
    first = events[0].data
    if isinstance(first, RunStarted | RunQueued):
        return first.agent, first.thread_id
    return "", None
