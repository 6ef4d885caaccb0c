"""The webhook outbox: what happened in the journal that someone should be told, kept in the store.

The journal is the source, so nothing journaled is lost: every `interval_s` a server reads the
runs updated since its scan's watermark (kept in the store, less `MARGIN_S` for commits that
land with an earlier time or from a server whose clock is behind), loads each run's events past
the last seq scanned, and writes one delivery per event that names a webhook event. A delivery
is a record keyed by its id, `{run_id}.{seq}`, written only when new, so two servers that scan
the same event enqueue it once, and the id a receiver deduplicates by is the same on every
attempt. A server killed between the journal's commit and the scan finds the event on the next
scan, its own after a restart or another server's.

Records (`stores.records`): `webhook` the delivery (its payload, state and attempts),
`webhook-due` the deliveries still to make (with the time of the next attempt),
`webhook-seen` the last seq scanned per run, `webhook-scan` the watermark and the origin (when
the first scan of the store ran: a run scanned for the first time is announced from there on,
not from its start, so a week-old run resumed today does not announce last week's approvals).

Retention (`prune`): a delivery that is done is removed once it is old — a delivered one after
`Webhook.keep_delivered_s` (7 days by default), one that failed for good (attempts spent) after
`Webhook.keep_failed_s` (30 days by default: it is what an operator comes to look at after an
outage of the receiver), both counted from its last attempt. A pending delivery is never
removed. The run's `webhook-seen` mark stays (one small record per run), so a run resumed
later is not announced again from its start.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from eudaimon.core.events import Event
from eudaimon.core.run_index import STATUS_OF_TYPE
from eudaimon.stores import index
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore

DELIVERY, DUE, SEEN, SCAN = "webhook", "webhook-due", "webhook-seen", "webhook-scan"
MARGIN_S = 60.0
"""How far behind its watermark a scan looks again: commits in flight and clocks that differ."""
_PAGE = 200

NAME_OF_TYPE: dict[str, str] = {
    "approval_requested": "awaiting_approval",
    "tool_outcome_unknown": "awaiting_reconciliation",
    "approval_timed_out": "approval_timed_out",
    "tool_waiting": "waiting",
    "run_failed": "failed",
    "run_completed": "completed",
    "run_cancelled": "cancelled",
    "budget_exceeded": "budget_exceeded",
}
"""The webhook event each journal event type is; an event type that sets a status of its own
(`STATUS_OF_TYPE`, e.g. `waiting`) is that status. Every name is one of `EVENT_NAMES`."""


def event_name(event: Event) -> str | None:
    return NAME_OF_TYPE.get(event.type) or STATUS_OF_TYPE.get(event.type)


@dataclass(slots=True)
class Delivery:
    id: str
    event: str
    run_id: str
    seq: int
    payload: str
    """The JSON body sent, byte for byte on every attempt (it is what the signature covers)."""
    created_at: str
    state: str = "pending"
    """`pending`, `delivered`, or `failed` (attempts exhausted)."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    """Each attempt: `at`, `status` (the receiver's HTTP status, or null), `error`, `duration_ms`."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Delivery:
        return cls(**json.loads(text))


def delivery_of(event: Event, name: str, agent: str) -> Delivery:
    """The delivery of `event`: its body names the run and the event, never arguments or errors
    (a receiver reads those through the API, with a key)."""
    data: dict[str, Any] = {"run_id": event.run_id, "agent": agent, "seq": event.seq, "event_type": event.type}
    call_id = getattr(event.data, "call_id", None)
    if isinstance(call_id, str):
        data["call_id"] = call_id
    tool = getattr(event.data, "tool", None)
    if isinstance(tool, str):
        data["tool"] = tool
    body = {"type": name, "timestamp": event.at.isoformat(), "data": data}
    return Delivery(
        id=f"{event.run_id}.{event.seq}",
        event=name,
        run_id=event.run_id,
        seq=event.seq,
        payload=json.dumps(body, sort_keys=True, separators=(",", ":")),
        created_at=datetime.now(UTC).isoformat(),
    )


async def scan(store: EventStore, records: RecordStore, events: frozenset[str]) -> int:
    """Enqueue a delivery for each event named in `events` journaled since the watermark; return
    how many were new. The first scan of a store starts from now (history is not announced)."""
    now = datetime.now(UTC)
    mark = await records.load_record(SCAN, "watermark")
    if mark is None:
        await records.put_record(SCAN, "origin", now.isoformat(), only_new=True)
        await records.put_record(SCAN, "watermark", now.isoformat())
        return 0
    since = datetime.fromisoformat(mark.body) - timedelta(seconds=MARGIN_S)
    origin = await _origin(records, since)
    newest = datetime.fromisoformat(mark.body)
    enqueued = 0
    cursor: index.Cursor | None = None
    while True:
        rows = await index.query_runs(store, index.RunQuery(limit=_PAGE, cursor=cursor))
        for row in rows:
            if row.updated_at < since:
                rows = []
                break
            newest = max(newest, row.updated_at)
            enqueued += await _scan_run(store, records, row.run_id, row.agent, events, origin)
        if len(rows) < _PAGE:
            break
        cursor = index.Cursor.after(rows[-1])
    if newest.isoformat() != mark.body:  # an idle store costs no write per tick
        await records.put_record(SCAN, "watermark", newest.isoformat())
    return enqueued


async def _origin(records: RecordStore, since: datetime) -> datetime:
    """When webhooks began on this store. A store whose first scan predates the record takes
    the current scan's lower bound: it may announce a little history, it misses nothing."""
    kept = await records.load_record(SCAN, "origin")
    if kept is not None:
        return datetime.fromisoformat(kept.body)
    await records.put_record(SCAN, "origin", since.isoformat(), only_new=True)
    kept = await records.load_record(SCAN, "origin")
    return datetime.fromisoformat(kept.body) if kept is not None else since


async def _scan_run(
    store: EventStore, records: RecordStore, run_id: str, agent: str, events: frozenset[str], origin: datetime
) -> int:
    seen = await records.load_record(SEEN, run_id)
    after = int(seen.body) if seen is not None else -1
    loaded = await store.load(run_id, after_seq=after)
    if not loaded:
        return 0
    enqueued = 0
    for event in loaded:
        name = event_name(event)
        if name is None or name not in events or (seen is None and event.at < origin):
            continue
        enqueued += await enqueue(records, delivery_of(event, name, agent))
    await records.put_record(SEEN, run_id, str(loaded[-1].seq))
    return enqueued


async def enqueue(records: RecordStore, delivery: Delivery) -> int:
    """Keep `delivery` and mark it due, unless it is kept already and no longer pending."""
    if not await records.put_record(DELIVERY, delivery.id, delivery.to_json(), only_new=True):
        kept = await records.load_record(DELIVERY, delivery.id)
        if kept is None or Delivery.from_json(kept.body).state != "pending":
            return 0
    due = json.dumps({"next_at": datetime.now(UTC).isoformat()})
    return int(await records.put_record(DUE, delivery.id, due, only_new=True))


def finished_at(delivery: Delivery) -> datetime:
    """When a delivery was last attempted (when it was made, if never): what its age counts from."""
    last = delivery.attempts[-1].get("at") if delivery.attempts else None
    return datetime.fromisoformat(last if isinstance(last, str) else delivery.created_at)


async def prune(
    records: RecordStore, *, keep_delivered_s: float, keep_failed_s: float, now: datetime | None = None
) -> int:
    """Remove the deliveries delivered more than `keep_delivered_s` ago and those failed for
    good more than `keep_failed_s` ago; return how many. Pending ones are kept, whatever their
    age. Several servers may prune at once: a record already removed is not counted twice."""
    now = now or datetime.now(UTC)
    keep = {"delivered": timedelta(seconds=keep_delivered_s), "failed": timedelta(seconds=keep_failed_s)}
    removed = 0
    for record in await records.load_records(DELIVERY):
        delivery = Delivery.from_json(record.body)
        kept_for = keep.get(delivery.state)
        if kept_for is not None and now - finished_at(delivery) > kept_for:
            removed += int(await records.delete_record(DELIVERY, record.key))
    return removed


async def deliveries(records: RecordStore, limit: int = 100) -> list[Delivery]:
    """The deliveries kept, newest first."""
    kept = [Delivery.from_json(r.body) for r in await records.load_records(DELIVERY)]
    kept.sort(key=lambda d: (d.created_at, d.id), reverse=True)
    return kept[:limit]
