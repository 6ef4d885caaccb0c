"""Cancelling a run that another process drives: a request left in the store, seen by its loop.

Only the process holding a run's lease appends to its journal, so a canceller elsewhere cannot
write `run_cancelled` itself without breaking the driver's compare-and-append. It leaves a
request instead, kept under the store key `cancel:<run_id>` (beside the run's snapshots), and
the driving loop reads that key now and then at a step boundary and journals `run_cancelled`
with the request's `by` and `reason`: the journal still has one writer, and says who cancelled.

A run that nobody drives (it waits for a human, or its driver died) is cancelled at once: the
canceller takes the run's lease, so no driver can start meanwhile, and appends the event itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from eudaimon.stores.base import EventStore, Snapshot

CANCEL_POLL_S = 1.0
"""How often, at most, a driving loop reads its run's cancel request: a run shorter than this
never reads it at all, and a long one pays one store read a second."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelRequest:
    reason: str
    by: str | None = None


def cancel_key(run_id: str) -> str:
    return f"cancel:{run_id}"


async def request_cancel(store: EventStore, run_id: str, request: CancelRequest) -> None:
    """Leave `request` for the process driving `run_id`; a second request keeps the first."""
    if await read_cancel_request(store, run_id) is not None:
        return
    data = json.dumps({"reason": request.reason, "by": request.by})
    await store.save_snapshot(Snapshot(cancel_key(run_id), 0, data))


async def read_cancel_request(store: EventStore, run_id: str) -> CancelRequest | None:
    """The request left for `run_id`, if any. A row that does not parse is no request."""
    snapshot = await store.load_snapshot(cancel_key(run_id))
    if snapshot is None:
        return None
    try:
        row = json.loads(snapshot.data)
        return CancelRequest(reason=str(row.get("reason") or "cancelled"), by=row.get("by"))
    except (ValueError, AttributeError):
        return None
