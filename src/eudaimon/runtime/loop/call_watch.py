"""A cancel that arrives while a run waits on its model: the call is closed on the wire.

The loop checks for a cancel at its step boundaries, but a model call is one long wait (a
generation of thousands of tokens, a backoff before a retry): a cancel then went unseen until
the answer came, and the provider went on generating. While a call is in flight, the watch
hears the run's `CancellationToken` (a callback) and looks for a request another process left
in the store (`cancel_requests`: one timer per event loop, every `POLL_STEP_S`, looks at the
mark the process reads at most every `CANCEL_POLL_S`; a run reads its own key only when the
mark changed). When
either comes, the call is cancelled, which closes its HTTP request (the SDKs close the
connection of a cancelled request), and raises `CallCancelled`: no retry and no fallback
starts after it, and the loop journals `run_cancelled` with the cancel's `by` and reason.

A call (`run`) and a backoff (`sleep`) are cut as `asyncio.timeout` cuts a block: the waiting
task is cancelled and the cancellation turned into `CallCancelled`; no task is made per call,
and the call keeps its turn (`turns`). A stream is read by a task of its own, its items passed
through a queue, so that the caller's code between two items is never what gets cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.cancel_requests import CANCEL_POLL_S, CancelRequest
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.per_loop import PerLoop
from eudaimon.runtime.loop.signals import LoopSignal

T = TypeVar("T")

POLL_STEP_S = CANCEL_POLL_S / 4
"""How often a waiting run looks whether a cancel request was left anywhere (a look at a mark
in memory; the store is read at most every `CANCEL_POLL_S` for all the process's runs)."""


class CallCancelled(LoopSignal):
    """Internal: a cancel arrived during a model call, which was closed."""

    def __init__(self, request: CancelRequest) -> None:
        super().__init__(request.reason)
        self.request = request


class _End:
    """The end of a stream in the queue."""


_END = _End()


class CallWatch:
    """One run's watch for a cancel during its model calls (`run`, `sleep`, `stream`).

    Args:
        journal: The run's journal: where requests from other processes are looked for.
        token: The run's token, if it has one.
    """

    def __init__(self, journal: RunJournal, token: CancellationToken | None) -> None:
        self._journal = journal
        self._token = token
        self.request: CancelRequest | None = None
        """The cancel seen, once seen (the loop journals it)."""
        self._stop: Callable[[], object] | None = None
        """What cuts the wait under way (set by `run` and `stream`)."""
        self._unhear: Callable[[], None] | None = None
        self._armed = False
        """Between a call's start and `pause`: the loop's poller looks for this run."""
        self._look: asyncio.Task[CancelRequest | None] | None = None

    async def run(self, call: Awaitable[T]) -> T:
        """`await call`, unless a cancel comes first: then the call is cancelled where it
        waits (its connection closed) and `CallCancelled` raised."""
        task = asyncio.current_task()
        assert task is not None
        self._arm()
        cancelling = task.cancelling()
        cut = False

        def stop() -> None:  # once: a second cancel would not be taken back by `uncancel`
            nonlocal cut
            if not cut:
                cut = True
                task.cancel()

        self._stop = stop
        try:
            return await call
        except asyncio.CancelledError:
            if cut and task.uncancel() <= cancelling:
                raise self._cancelled() from None
            raise
        finally:
            self._stop = None

    async def sleep(self, delay_s: float) -> None:
        """A backoff that a cancel ends early, with `CallCancelled`."""
        await self.run(asyncio.sleep(delay_s))

    async def stream(self, items: AsyncIterator[T]) -> AsyncIterator[T]:
        """`items`, read by a task of their own; a cancel closes them and raises `CallCancelled`."""
        self._arm()
        # Unbounded: the reader keeps up with the provider however slow the caller is, and
        # its end, however it comes (a cancel from anywhere included), always wakes the caller.
        queue: asyncio.Queue[T | _End | Exception] = asyncio.Queue()
        reader = asyncio.ensure_future(_read(items, queue))
        reader.add_done_callback(lambda _: queue.put_nowait(_END))

        def stop() -> None:
            reader.cancel()

        self._stop = stop
        try:
            while True:
                item = await queue.get()
                if self.request is not None:
                    await _finish(reader)
                    raise self._cancelled()
                if isinstance(item, _End):
                    return
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            self._stop = None
            await _finish(reader)

    def close(self) -> None:
        """Stop listening: the run's drive is over."""
        self.pause()
        if self._unhear is not None:
            self._unhear()
            self._unhear = None

    def pause(self) -> None:
        """Stop looking in the store until the next call (the token is heard until `close`:
        once per drive, not per call). A look under way goes on to its end: a request it
        reads is kept in `request`, for the loop's next check."""
        if self._armed:
            self._armed = False
            _POLLERS.get().waiting.discard(self)

    def _arm(self) -> None:
        if self.request is not None:
            raise CallCancelled(self.request)
        if self._token is not None and self._unhear is None:
            token = self._token
            self._unhear = token.on_cancel(lambda: self._fire(CancelRequest(reason=token.reason, by=token.by)))
        if not self._armed:
            self._armed = True
            if self._look is None:
                _POLLERS.get().add(self)

    def tick(self, poller: _Poller) -> None:
        """The poller's look: when a request was left anywhere, read whether it is this run's
        (the run leaves the poller meanwhile: one read at a time)."""
        if self.request is None and self._journal.may_have_cancel_request():
            poller.waiting.discard(self)
            look = self._look = asyncio.ensure_future(self._journal.cancel_request())
            look.add_done_callback(self._looked)

    def _looked(self, look: asyncio.Task[CancelRequest | None]) -> None:
        self._look = None
        found = None if look.cancelled() or look.exception() is not None else look.result()
        if found is not None:
            self._fire(found)
        elif self._armed:  # still waiting on its model: look again at the next tick
            _POLLERS.get().add(self)

    def _fire(self, request: CancelRequest) -> None:
        if self.request is None:
            self.request = request
        if self._stop is not None:
            self._stop()

    def _cancelled(self) -> CallCancelled:
        assert self.request is not None
        return CallCancelled(self.request)


async def _read(items: AsyncIterator[T], queue: asyncio.Queue[T | _End | Exception]) -> None:
    try:
        async for item in items:
            queue.put_nowait(item)
    except Exception as exc:  # handed to the caller, in order
        queue.put_nowait(exc)
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()


async def _finish(task: asyncio.Future[None]) -> None:
    """Cancel `task` and wait until it has unwound (its connection closed). A cancel of the
    caller itself still reaches the caller."""
    if not task.done():
        task.cancel()
        await asyncio.wait((task,))
    if not task.cancelled():
        task.exception()  # retrieved: its failure, if any, was handed over through the queue


class _Poller:
    """One event loop's timer for all its runs waiting on a model: every `POLL_STEP_S` while
    any waits, each looks whether a request was left for it. One timer, not one per call: a
    timer set and cancelled per model call cost more than the rest of the watch."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.waiting: set[CallWatch] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, watch: CallWatch) -> None:
        self.waiting.add(watch)
        if self._timer is None:
            self._timer = self._loop.call_later(POLL_STEP_S, self._tick)

    def _tick(self) -> None:
        self._timer = None
        for watch in list(self.waiting):
            watch.tick(self)
        if self.waiting:
            self._timer = self._loop.call_later(POLL_STEP_S, self._tick)


_POLLERS = PerLoop(_Poller)
