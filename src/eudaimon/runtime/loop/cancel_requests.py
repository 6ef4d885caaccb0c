"""Cancelling a run that another process drives: a request left in the store, seen by its loop.

Only the process holding a run's lease appends to its journal, so a canceller elsewhere cannot
write `run_cancelled` itself without breaking the driver's compare-and-append. It leaves a
request instead, kept under the store key `cancel:<run_id>` (beside the run's snapshots), and
the driving loop reads that key at a step boundary and journals `run_cancelled` with the
request's `by` and `reason`: the journal still has one writer, and says who cancelled.

A driving loop does not read its own key now and then: a process with 1,000 runs in flight
read 1,000 keys a second, and more the longer its runs took under load. A canceller also
changes one key every process reads (`CHANGES_KEY`), and a process reads that one key at most
every `CANCEL_POLL_S` for all its runs (`_Watch`); a run reads its own key only when it changed
since the run last looked (and once when it is reopened: a request may have been left while
nobody drove it).

A run that nobody drives (it waits for a human, or its driver died) is cancelled at once: the
canceller takes the run's lease, so no driver can start meanwhile, and appends the event itself.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass

from eudaimon.runtime.loop.per_store import PerStore
from eudaimon.stores.base import EventStore, Snapshot

CANCEL_POLL_S = 1.0
"""How often, at most, a process reads `CHANGES_KEY` for all the runs it drives: a request is
seen within about this long, and a process pays one store read a second however many runs it
drives."""
CHANGES_KEY = "cancel-requests"
"""The key every request changes (a snapshot's version and a nonce): not `cancel:<id>`, so no
run id can name it."""


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
    # After the request itself: a poller that sees the change then finds the request. The nonce
    # makes two cancellers that read the same version still change the key (a later save of an
    # equal version replaces the earlier).
    changed = await store.load_snapshot(CHANGES_KEY)
    version = changed.version + 1 if changed is not None else 1
    await store.save_snapshot(Snapshot(CHANGES_KEY, version, secrets.token_hex(8)))


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


_Mark = tuple[int, str] | None
"""What `CHANGES_KEY` held when read: (version, nonce), or None when absent."""
_UNSEEN: object = object()
"""The mark of a process that has not read it yet."""
_NEVER: object = object()
"""What a reopened run has seen: differs from every mark, `_UNSEEN` included."""


class _Watch:
    """`CHANGES_KEY` of one store as this process last read it, shared by all its runs.

    Read in the background, at most every `CANCEL_POLL_S`: a run never waits for it (every
    run of a busy process waiting for one read behind a queue of commits stalled them all)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.mark: _Mark | object = _UNSEEN
        self._due = float("-inf")
        """When (the runs' clock, seconds) the next read may start."""
        self._reading: asyncio.Task[None] | None = None

    def current(self, moment: float) -> _Mark | object:
        """The mark as last read; a read starts if the last one began `CANCEL_POLL_S` ago."""
        if moment >= self._due and self._reading is None:
            self._due = moment + CANCEL_POLL_S
            self._reading = asyncio.get_running_loop().create_task(self._read())
        return self.mark

    async def _read(self) -> None:
        try:
            kept = await self.store.load_snapshot(CHANGES_KEY)
            self.mark = (kept.version, kept.data) if kept is not None else None
        except Exception:  # the store failed: the next look tries again, and commits will say so
            pass
        finally:
            self._reading = None


_WATCHES = PerStore(_Watch)


def _watch(store: EventStore) -> _Watch | None:
    """The running event loop's watch on `store`; None outside a running loop."""
    try:
        return _WATCHES.get(store)
    except RuntimeError:
        return None


class CancelPoll:
    """One run's look for a cancel request left for it, at its step boundaries.

    A new run starts from the mark its process last read, since any request left after that
    read changes the mark; a reopened run reads its own key at its first look (a request may
    have been left while nobody drove it).
    """

    def __init__(self, store: EventStore, run_id: str, *, new: bool) -> None:
        self.store = store
        self.run_id = run_id
        watch = _watch(store) if new else None
        self._seen: _Mark | object = watch.mark if watch is not None else _NEVER

    def may_have(self, moment: float) -> bool:
        """Whether a request was left anywhere since this run last looked: a look without
        awaiting anything (it may start the process's background read), for a run that waits
        on its model; `poll` then reads the run's own key."""
        watch = _watch(self.store)
        return watch is not None and watch.current(moment) != self._seen

    async def poll(self, moment: float) -> CancelRequest | None:
        """The request left for this run, if a request was left anywhere since the last look."""
        watch = _watch(self.store)
        assert watch is not None  # awaited, so inside a running loop
        mark = watch.current(moment)
        if mark == self._seen:
            return None
        self._seen = mark  # read before the run's own key: a later request changes it again
        return await read_cancel_request(self.store, self.run_id)
