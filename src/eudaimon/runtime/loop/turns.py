"""Runs take turns with the rest of their event loop: at most `SLICE_S` of steps at a time.

A thousand runs whose model calls return together are all ready in one turn of the loop, and
asyncio runs every ready callback before it looks at its timers again: 1,000 steps of ~100 µs
kept a 10 ms timer (a server's request, a heartbeat) waiting 100 ms. So a run asks for a turn
(`take_turn`) before each step's work. Steps go ahead while the current slice of `SLICE_S`
lasts; once it is spent, the next steps wait in line (first come, first served) until the loop
has run the timers that came due meanwhile, and a new slice lets through about as many as fit
at the last one's pace. A run let through finishes what it began (the rest of its step, within
one more slice) instead of queueing again at each of its checks. A step that finds the loop
idle starts a slice at once, so a lone run waits only when it has held the loop for a slice.

Under load each step waits once for its turn: measured with 1,000 runs in flight
(`benchmarks/concurrent_runs.py`), a timer's p99 lateness went from 36–40 ms to 7–11 ms (ticks no
full garbage collection delayed) for 0–15 µs more CPU a step.
"""

from __future__ import annotations

import asyncio
from collections import deque

from eudaimon.runtime.loop.per_loop import PerLoop

SLICE_S = 0.002
"""How long steps run back to back before the loop's other callbacks and timers get a turn: a
timer on a loop full of runs fires within about two slices of its time."""


class _Turns:
    """One event loop's slices."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._ends = float("-inf")
        """When (the loop's clock) the current slice is spent."""
        self._holders: set[int] = set()
        """The tasks (by id) let through after waiting in the current slice: they finish what they
        began instead of waiting again at each of their checks."""
        self._began = float("-inf")
        self._passed = 0
        """Steps let through in the current slice: what the next one's share is reckoned from."""
        self._turned = True
        """Whether the loop has gone round since the current slice began: then a step that finds
        it spent starts the next one at once, since the loop's timers have had their turn."""
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._next: asyncio.TimerHandle | None = None

    def free(self) -> bool:
        """Whether a step may go ahead at once, the slice lasting and nobody in line (counted
        as let through): the usual answer, given without a coroutine of its own."""
        if self._loop.time() < self._ends and not self._waiting:
            self._passed += 1
            return True
        return False

    async def take(self) -> None:
        now = self._loop.time()
        task = id(asyncio.current_task())
        if task in self._holders and now < self._ends + SLICE_S:
            return  # it waited for its turn in this slice: it finishes what it began, within reason
        if not self._waiting and self._turned:  # spent, but the loop went round since it began
            self._begin(now)
            self._passed = 1
            return
        waiter = self._loop.create_future()
        self._waiting.append(waiter)
        if self._next is None:
            # A timer, not `call_soon`: timers already due run before it.
            self._next = self._loop.call_later(0, self._next_slice)
        try:
            await waiter
            self._holders.add(task)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._passed -= 1  # let through, then cancelled: its place is not used
            raise

    def _begin(self, now: float) -> None:
        self._holders = set()
        self._began, self._ends = now, now + SLICE_S
        self._turned = False
        self._loop.call_soon(self._mark_turned)

    def _mark_turned(self) -> None:
        self._turned = True

    def _next_slice(self) -> None:
        """Wake, in order, as many waiting steps as fit in a slice at the pace of the last one
        (at most twice as many as it let through: one slow step must not shrink the share for
        good, nor one fast turn flood the next)."""
        self._next = None
        now = self._loop.time()
        took = max(now - self._began, 1e-4)
        quota = max(1, min(2 * self._passed + 1, round(self._passed * SLICE_S / took)))
        self._begin(now)
        self._passed = 0
        waiting = self._waiting
        while waiting and self._passed < quota:
            waiter = waiting.popleft()
            if not waiter.done():  # a cancelled waiter is done
                waiter.set_result(None)
                self._passed += 1
        if waiting:
            self._next = self._loop.call_later(0, self._next_slice)


_TURNS = PerLoop(_Turns)


async def take_turn() -> None:
    """Wait, if the loop's current slice is spent, until the loop has had its turn."""
    turns = _TURNS.get()
    if not turns.free():
        await turns.take()
