"""`MemoryStore`: the journal in a dict, for tests and throwaway agents.

The runs that ended longest ago are kept encoded: a tuple of (seq, at, type, payload JSON) per
event, in a tuple, holds nothing the garbage collector tracks (a collection untracks a tuple of
atomic values; an object wrapping it would be one tracked object a run, kept for as long as the
store), whereas the events themselves are a
hundred-odd objects a run that every full collection walks, for as long as the process lives:
with 10,000 runs kept, collections walked 1.5 million objects and stopped the process for
seconds. The `KEEP_DECODED` that ended last stay objects: they are the ones read next (a
response, `agent.state`, a fork), and a store that never holds more of them (a test, a script)
never pays for the encoding. A run that goes on after its end (a resume) is decoded back first.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from eudaimon.core.codec import payload_from_json, payload_json
from eudaimon.core.errors import ConcurrencyConflict, LeaseHeld, LeaseLost
from eudaimon.core.events import TERMINAL_TYPES, Event, RunStarted, ToolCompleted
from eudaimon.core.messages import ContentPart, DocumentPart, ImagePart
from eudaimon.core.run_index import RunRow
from eudaimon.stores.base import Fence, Lease, RunSummary, Snapshot, check_batch, summary_fields
from eudaimon.stores.index import DayRow, RunQuery, day_rows, select
from eudaimon.stores.records import Record

KEEP_DECODED = 256
"""Ended runs kept as objects, the most recently ended; older ones are encoded (`_encoded`)."""

_Row = tuple[int, datetime, str, str]
"""An ended run's event, encoded: seq, at, type, payload JSON."""


class MemoryStore:
    """Keeps every run's events in process memory; lost when the process ends."""

    def __init__(self) -> None:
        self._events: dict[str, list[Event] | tuple[_Row, ...]] = {}
        self._runs: dict[str, tuple[str, str | None]] = {}
        """Each run's agent and thread; the rest of its summary is read off its events when asked."""
        self._index: dict[str, RunRow] = {}
        """Each run's row of the index (`eudaimon.core.run_index`), as of its last reading."""
        self._unindexed: set[str] = set()
        """The runs appended to since their row was advanced: rows are advanced when read (or
        when the run is encoded), not on every append, which a step would pay for."""
        self._leases: dict[str, tuple[str, float]] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._records: dict[tuple[str, str], str] = {}
        self._blobs: dict[bytes, bytes] = {}
        """Each distinct image or document kept once: events that carry equal data share it."""
        self._ended: dict[str, None] = {}
        """The runs that ended and are still kept as objects, in the order they ended."""

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        if not events:
            return
        retaken_at: float | None = None
        if fence is not None:
            holder, now = self._leases.get(fence.name), time.monotonic()
            if holder is None or holder[0] != fence.owner or (holder[1] <= now and fence.ttl_s <= 0):
                raise LeaseLost(fence.name)
            if holder[1] <= now:  # lapsed, and no one took it: taken back (`Fence`) once it lands
                retaken_at = now
        journal = self._journal(run_id)
        actual = len(journal) if journal is not None else 0
        if expected_seq != actual:
            raise ConcurrencyConflict(run_id, expected_seq, actual)
        check_batch(run_id, expected_seq, events)
        if fence is not None and retaken_at is not None:
            self._leases[fence.name] = (fence.owner, retaken_at + fence.ttl_s)
            if fence.taken_back is not None:
                fence.taken_back(retaken_at)
        if journal is None:
            journal = self._events[run_id] = []
            self._runs[run_id] = summary_fields(events)
        journal.extend(self._shared(event) for event in events)
        self._unindexed.add(run_id)
        if events[-1].type in TERMINAL_TYPES:
            self._ended.pop(run_id, None)
            self._ended[run_id] = None
            while len(self._ended) > KEEP_DECODED:
                self._encode(next(iter(self._ended)))
        if snapshot is not None:
            await self.save_snapshot(snapshot)

    def _shared(self, event: Event) -> Event:
        """`event` with its parts' data replaced by the copy already kept, if any (bytes hash
        once and compare by value): the same image in every later run's history costs its
        bytes once, as it does in the persistent stores."""
        if event.type != "tool_completed" and event.type != "run_started":
            return event  # most events: one comparison
        data = event.data
        if isinstance(data, ToolCompleted) and data.parts:
            return replace(event, data=replace(data, parts=self._parts(data.parts)))
        if isinstance(data, RunStarted) and any(m.parts for m in data.messages):
            messages = tuple(replace(m, parts=self._parts(m.parts)) if m.parts else m for m in data.messages)
            return replace(event, data=replace(data, messages=messages))
        return event

    def _parts(self, parts: tuple[ContentPart, ...]) -> tuple[ContentPart, ...]:
        shared: list[ContentPart] = []
        for part in parts:
            if isinstance(part, ImagePart | DocumentPart) and part.data is not None:
                part = replace(part, data=self._blobs.setdefault(part.data, part.data))
            shared.append(part)
        return tuple(shared)

    def _encode(self, run_id: str) -> None:
        """Keep a run that ended, and has not gone on since, encoded (unless it carries data)."""
        del self._ended[run_id]
        journal = self._events.get(run_id)
        if not isinstance(journal, list) or journal[-1].type not in TERMINAL_TYPES:
            return
        self._advance(run_id)
        if not any(_data_parts(e) for e in journal):
            ended = _encoded(journal)
            if ended is not None:
                self._events[run_id] = ended

    def _journal(self, run_id: str) -> list[Event] | None:
        """The run's events as objects (an ended run's decoded and kept so again), if any."""
        journal = self._events.get(run_id)
        if isinstance(journal, tuple):
            journal = self._events[run_id] = _decoded(run_id, journal)
        return journal

    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        journal = self._events.get(run_id)
        if isinstance(journal, tuple):
            return _decoded(run_id, journal, after_seq)
        return list((journal or ())[after_seq + 1 :])

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        runs = [
            self._summary(run_id, agent, thread)
            for run_id, (agent, thread) in self._runs.items()
            if thread_id is None or thread == thread_id
        ]
        runs.sort(key=lambda s: s.updated_at, reverse=True)
        return runs[:limit]

    def _summary(self, run_id: str, agent: str, thread_id: str | None) -> RunSummary:
        events = self._events[run_id]
        if isinstance(events, tuple):
            first_at, last_at, last_type = events[0][1], events[-1][1], events[-1][2]
        else:
            first_at, last_at, last_type = events[0].at, events[-1].at, events[-1].type
        return RunSummary(run_id, agent, thread_id, first_at, last_at, len(events), last_type)

    def _advance(self, run_id: str) -> None:
        """Bring the run's row of the index up to its last event."""
        if run_id in self._unindexed:
            self._unindexed.discard(run_id)
            row = self._index.get(run_id) or RunRow(run_id)
            journal = self._events.get(run_id)
            if isinstance(journal, tuple):
                events = _decoded(run_id, journal, row.event_count - 1)
            else:
                events = (journal or [])[row.event_count :]
            self._index[run_id] = row.advance(events)

    def _rows(self) -> list[RunRow]:
        for run_id in list(self._unindexed):
            self._advance(run_id)
        return list(self._index.values())

    async def query_runs(self, query: RunQuery) -> list[RunRow]:
        """The index's rows `query` asks for, most recently updated first."""
        return select(self._rows(), query)

    async def run_row(self, run_id: str) -> RunRow | None:
        self._advance(run_id)
        return self._index.get(run_id)

    async def dashboard(self, since: datetime, agent: str | None = None) -> list[DayRow]:
        """Per agent and UTC day of creation since `since`: runs by status, cost, tokens, durations."""
        return day_rows(self._rows(), since, agent)

    async def delete_run(self, run_id: str) -> None:
        self._events.pop(run_id, None)
        self._ended.pop(run_id, None)
        self._unindexed.discard(run_id)
        self._index.pop(run_id, None)
        self._runs.pop(run_id, None)
        self._snapshots.pop(f"run:{run_id}", None)
        if self._blobs:  # keep only the data some remaining run still carries
            kept: dict[bytes, bytes] = {}
            for events in self._events.values():
                for event in events if isinstance(events, list) else ():
                    for part in _data_parts(event):
                        kept[part] = part
            self._blobs = kept

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        now = time.monotonic()
        holder = self._leases.get(name)
        if holder is not None and holder[0] != owner and holder[1] > now:
            raise LeaseHeld(name, holder[0], holder[1] - now)
        self._leases[name] = (owner, now + ttl_s)
        return Lease(name, owner, ttl_s)

    async def renew_leases(self, leases: Sequence[tuple[str, str]], ttl_s: float) -> list[bool]:
        """Renew each (name, owner) still naming that owner, lapsed or not: which were."""
        until = time.monotonic() + ttl_s
        held = []
        for name, owner in leases:
            holder = self._leases.get(name)
            ok = holder is not None and holder[0] == owner
            if ok:
                self._leases[name] = (owner, until)
            held.append(ok)
        return held

    async def lease_holders(self, names: Sequence[str]) -> dict[str, Lease]:
        """The leases among `names` held unexpired now, each with the time it has left."""
        now = time.monotonic()
        held = ((name, self._leases.get(name)) for name in names)
        return {name: Lease(name, h[0], h[1] - now) for name, h in held if h is not None and h[1] > now}

    async def release_lease(self, name: str, owner: str) -> None:
        holder = self._leases.get(name)
        if holder is not None and holder[0] == owner:
            del self._leases[name]

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        kept = self._snapshots.get(snapshot.key)
        if kept is None or kept.version <= snapshot.version:
            self._snapshots[snapshot.key] = snapshot

    async def load_snapshot(self, key: str) -> Snapshot | None:
        return self._snapshots.get(key)

    async def delete_snapshots(self) -> int:
        count = len(self._snapshots)
        self._snapshots.clear()
        return count

    async def put_record(
        self, kind: str, key: str, body: str, *, only_new: bool = False, expected: str | None = None
    ) -> bool:
        if only_new and (kind, key) in self._records:
            return False
        if expected is not None and self._records.get((kind, key)) != expected:
            return False
        self._records[(kind, key)] = body
        return True

    async def load_records(self, kind: str, *, limit: int = 10_000) -> list[Record]:
        found = sorted((k, body) for (c, k), body in self._records.items() if c == kind)
        return [Record(kind, k, body) for k, body in found[:limit]]

    async def load_record(self, kind: str, key: str) -> Record | None:
        body = self._records.get((kind, key))
        return None if body is None else Record(kind, key, body)

    async def delete_record(self, kind: str, key: str) -> bool:
        return self._records.pop((kind, key), None) is not None

    async def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"MemoryStore(runs={len(self._events)})"


def _encoded(events: Sequence[Event]) -> tuple[_Row, ...] | None:
    """An ended run's events encoded (only runs without image or document data are kept so:
    those share their bytes with other runs through `MemoryStore._blobs`); None if one does not
    encode (the run is then kept as it is)."""
    try:
        return tuple((e.seq, e.at, e.type, payload_json(e.data)) for e in events)
    except Exception:  # any failure to encode (pydantic raises several kinds): keep the objects
        return None


def _decoded(run_id: str, rows: tuple[_Row, ...], after_seq: int = -1) -> list[Event]:
    return [
        Event(run_id, seq, at, tag, payload_from_json(tag, payload)) for seq, at, tag, payload in rows[after_seq + 1 :]
    ]


def _data_parts(event: Event) -> list[bytes]:
    data = event.data
    if isinstance(data, ToolCompleted):
        parts: tuple[ContentPart, ...] = data.parts
    elif isinstance(data, RunStarted):
        parts = tuple(p for m in data.messages for p in m.parts)
    else:
        return []
    return [p.data for p in parts if isinstance(p, ImagePart | DocumentPart) and p.data is not None]
