"""How many runs one process drives at once: the rest wait their turn, in order.

A process asked for 10,000 runs at once used to drive them all: every step, commit and lease
renewal of every run competed for one event loop and one SQLite writer, so each waited longer
the more there were, renewals came late and the process lost its own runs' leases. So a
driver takes a slot before it takes its run's lease and gives it back when it stops; when all
`EUDAIMON_MAX_ACTIVE_RUNS` slots of the event loop are taken, a run waits (first come, first
served), holding no lease of its run yet. A run started inside another run's tool (an agent used
as a tool) drives in its parent's slot: waiting for a slot its parent may hold would deadlock.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import weakref
from collections import deque

from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.loop.turns import take_turn

DEFAULT_MAX_ACTIVE_RUNS = 1000


def max_active_runs() -> int:
    """`EUDAIMON_MAX_ACTIVE_RUNS`, else 1,000: the runs one process (event loop) drives at once.

    Raises:
        ConfigurationError: the variable is not a positive integer.
    """
    raw = os.environ.get("EUDAIMON_MAX_ACTIVE_RUNS")
    if raw is None or not raw.strip():
        return DEFAULT_MAX_ACTIVE_RUNS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(f"EUDAIMON_MAX_ACTIVE_RUNS={raw!r}; set a positive integer, e.g. 1000")
    return value


class RunSlots:
    """`limit` slots handed out first come, first served, each in O(1) however many wait.

    Not `asyncio.Semaphore`: on Python 3.11 its release scans the waiters already woken but not
    yet running, so when a wave of runs ends together (a thousand model calls returning in one
    turn of the loop) each release scanned all the wakes before it, and 10,000 runs spent a
    second of CPU there alone. Here a slot given back goes straight to the first live waiter.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.free = limit
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        """Waiters not cancelled (an O(n) count: for tests and reports, not the hot path)."""
        return sum(1 for w in self._waiting if not w.done())

    async def take(self) -> None:
        if self.free > 0 and not self._waiting:
            self.free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed a slot, then cancelled before running: pass it on
            raise  # still waiting: `give` skips the cancelled future when it comes to it

    def give(self) -> None:
        waiting = self._waiting
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():  # a cancelled waiter is done
                waiter.set_result(None)
                return
        self.free += 1


_IN_SLOT: contextvars.ContextVar[bool] = contextvars.ContextVar("eudaimon_in_run_slot", default=False)
_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RunSlots] = weakref.WeakKeyDictionary()


def slots(limit: int) -> RunSlots:
    """The running event loop's slots for `limit` runs at once."""
    loop = asyncio.get_running_loop()
    found = _SLOTS.get(loop)
    if found is None or found.limit != limit:
        # A new limit (the variable changed) takes effect for runs that start after it.
        found = _SLOTS[loop] = RunSlots(limit)
    return found


class run_slot:  # lower case: used as `async with run_slot(limit)`, like `contextlib.suppress`
    """Hold one of the event loop's `limit` slots for driving a run, waiting for one if needed.

    A class, not an `asynccontextmanager`: a generator-based one is three objects more per
    queued run, and 10,000 queued prompts made every full garbage collection walk 30,000 more.
    """

    __slots__ = ("_held", "_limit", "_token")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._held: RunSlots | None = None
        self._token: contextvars.Token[bool] | None = None

    async def __aenter__(self) -> None:
        if _IN_SLOT.get():
            return
        held = slots(self._limit)
        await held.take()
        self._held, self._token = held, _IN_SLOT.set(True)
        try:
            await take_turn()  # a run's start is a step's worth of work too
        except BaseException:
            self._release()
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        held, token = self._held, self._token
        if held is None or token is None:
            return
        self._held = self._token = None
        held.give()
        try:
            _IN_SLOT.reset(token)
        except ValueError:  # a stream closed from another context than it was driven in
            _IN_SLOT.set(False)
