"""`RunJournal`: a run's state together with the events not yet committed.

Every event goes through `record`, which folds it into the state at once (the loop decides on
what it has recorded) and buffers it; `flush` commits the buffer in one atomic append. The
loop flushes exactly where durability matters: before a model call, before a tool that may
not run twice or changes anything (a batch of READ calls runs first and rides with the next
model attempt: one commit per step), and when the run stops. A failed flush (another process
appended first) ends this driver.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Protocol

from eudaimon.core.codec import state_to_json
from eudaimon.core.errors import InvalidEvent, JournalError
from eudaimon.core.events import Event, EventData
from eudaimon.core.state import RunState
from eudaimon.core.validity import check_payload
from eudaimon.runtime.loop.cancel_requests import CancelPoll, CancelRequest
from eudaimon.runtime.loop.clock import SYSTEM_CLOCK, Clock
from eudaimon.stores.base import EventStore, Fence, Snapshot

if TYPE_CHECKING:
    from eudaimon.runtime.loop.config import RuntimeConfig

SNAPSHOT_EVERY = 200
"""Events between snapshots of a run's state."""
_STATE_FIELDS = tuple(f.name for f in fields(RunState))


class RunObserver(Protocol):
    """The seam observers (tracing) hang on: a run's attempts and the events they record.

    An attempt is one process driving a run, from taking its lease to letting go. Observers see
    only what is recorded live, as it is recorded: events read back from the journal on resume
    are never shown to them, so a recorded effect is never reported as happening again. An
    observer may record events itself (`journal.record`) before the one it is shown; none is
    given to it after a terminal event.
    """

    def attempt_started(self, journal: RunJournal, cfg: RuntimeConfig) -> None: ...

    def recording(self, journal: RunJournal, data: EventData) -> None:
        """`data` is about to be recorded (folded, buffered)."""

    def recorded(self, journal: RunJournal, data: EventData) -> None: ...

    def attempt_ended(self, journal: RunJournal, error: BaseException | None) -> None: ...


observers: list[RunObserver] = []
"""The observers installed (`eudaimon.telemetry.instrument`); empty costs one test per event."""


class RunJournal:
    def __init__(
        self, store: EventStore, state: RunState, *, snapshot_every: int = SNAPSHOT_EVERY, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.store = store
        self.state = state
        self.clock = clock
        """Time, request ids and jitter for this run's driver (a workflow brings its own)."""
        self._now = clock.now
        self.guard: Callable[[], Awaitable[None]] | None = None
        """Awaited before every commit; raises to stop a driver that must not act (a lost lease)."""
        self.fence: Fence | None = None
        """The lease every commit is made under, checked by the store in the commit itself."""
        self.effect_guard: Callable[[float], None] | None = None
        """Called with `committed_at` immediately before a tool that may not run twice is
        invoked; raises unless the driver's lease surely still holds and has held since that
        commit (`LeaseKeeper.check_effect`)."""
        self.committed_at = float("-inf")
        """When (monotonic) the last successful commit began: it proved that nobody else had
        appended; a lease held since then proves nobody else has acted."""
        self.fencing_token = 0
        """What `ToolContext.fencing_token` carries: the number of events the journal held when
        this driver took the run over. A later driver that may act took over after every commit
        of this one, so it holds a larger token (see `RunDriver._take_over`)."""
        self.snapshot_every = snapshot_every
        self.replayed = False
        """True for a Temporal workflow's journal: its recorded histories must replay as they
        were recorded, so the loop keeps what they did: an append before every tool activity
        (no READ batch runs before its intents commit) and no wait for calls cut short by
        cancellation. Elsewhere a READ batch runs first and its step commits once."""
        self.in_doubt = False
        """Whether a commit was cut short (its task cancelled while the store had the batch):
        whether it landed is unknown here, so nothing more may be appended; a driver that
        takes the run over reads what landed."""
        self.failure: BaseException | None = None
        """The exception that ended the run in this process, if one did: the cause of its error."""
        self.deps: Any = None
        """The caller's `deps` for this run (`prompt(deps=…)`, `resume(deps=…)`): handed to user
        code in its `ToolContext`, never journaled."""
        self._committed_seq = state.next_seq
        self._buffer: list[Event] = []
        # One commit at a time, without the cost of an `asyncio.Lock` when uncontended (the
        # loop flushes twice a step, nearly always alone).
        self._committing = False
        self._waiters: list[asyncio.Future[None]] = []
        # A new run cannot have been asked to stop yet; a reopened one (resumed) may have been
        # while nobody drove it, so it looks at once.
        self._cancels = CancelPoll(store, state.run_id, new=state.next_seq == 0)

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def committed_seq(self) -> int:
        """The next seq the store expects: events before it are durable."""
        return self._committed_seq

    def replace_state(self, state: RunState) -> None:
        """Adopt a freshly loaded state (nothing may be buffered)."""
        assert not self._buffer, "cannot reload a journal with uncommitted events"
        self.state = state
        self._committed_seq = state.next_seq

    async def cancel_request(self) -> CancelRequest | None:
        """A cancel request another process left for this run (`cancel_requests`): looked for
        only when a request was left anywhere since the last look (read at most every
        `CANCEL_POLL_S` seconds, once for all this process's runs); None otherwise. A
        workflow's journal (`replayed`) has none to find: its run is cancelled as its workflow,
        and its store holds no requests, so it starts no read of them (a task on every run's
        workflow loop)."""
        if self.replayed:
            return None
        return await self._cancels.poll(self.clock.monotonic_ms() / 1000)

    def may_have_cancel_request(self) -> bool:
        """Whether `cancel_request` may find one now: a look that awaits nothing."""
        return not self.replayed and self._cancels.may_have(self.clock.monotonic_ms() / 1000)

    def record(self, data: EventData) -> Event:
        """Fold `data` into the state and buffer it for the next commit.

        Raises:
            InvalidEvent: `data` would not read back from the journal; neither the state nor
                the buffer changed.
        """
        if observers:
            for observer in observers:
                observer.recording(self, data)
        state = self.state
        check_payload(data, run_id=state.run_id)
        event = Event(state.run_id, state.next_seq, self._now(), data.type, data)
        state.apply(event)
        self._buffer.append(event)
        if observers:
            for observer in observers:
                observer.recorded(self, data)
        return event

    async def _roll_back(self) -> None:
        """Make the state (the same object: the loop holds it) the fold of the committed events."""
        events = await self.store.load(self.run_id)
        folded = RunState.from_events(events) or RunState(run_id=self.run_id)
        for name in _STATE_FIELDS:
            setattr(self.state, name, getattr(folded, name))

    async def flush(self) -> None:
        """Commit what is buffered. Concurrent callers queue; events recorded meanwhile ride along.

        Every `snapshot_every` events the folded state rides along too, in the same transaction.
        """
        while self._committing:
            # Another caller's commit is in flight: wait for it, then commit what it left.
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
        if not self._buffer:
            return
        if self.in_doubt:
            raise JournalError(
                f"a commit of run {self.run_id} was cut short, so what the journal holds is unknown here; "
                "resume the run (it reads what landed) instead of appending to this journal"
            )
        self._committing = True
        try:
            if self.guard is not None:
                await self.guard()  # may take the lease back: events recorded meanwhile ride along
            batch, self._buffer = self._buffer, []
            before, after = self._committed_seq, self._committed_seq + len(batch)
            snapshot = None
            if self.snapshot_every and before // self.snapshot_every != after // self.snapshot_every:
                snapshot = Snapshot(f"run:{self.run_id}", after - 1, state_to_json(self.state))
            began = self.clock.monotonic_ms() / 1000.0
            if self.fence is None:
                await self.store.append(self.state.run_id, before, batch, snapshot)
            else:
                await self.store.append(self.state.run_id, before, batch, snapshot, fence=self.fence)
            self._committed_seq = after
            self.committed_at = began
        except asyncio.CancelledError:
            self.in_doubt = True
            raise
        except (ValueError, TypeError, RecursionError) as exc:
            # The store could not encode the batch (what `check_payload` should have refused):
            # nothing was written, so the state goes back to what the journal holds.
            await self._roll_back()
            raise InvalidEvent(
                batch[0].type, f"the store could not encode the batch: {exc}", run_id=self.run_id
            ) from exc
        finally:
            self._committing = False
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():  # a waiter cancelled meanwhile is done
                    waiter.set_result(None)
