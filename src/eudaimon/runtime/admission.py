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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from eudaimon.core.errors import ConfigurationError

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


_IN_SLOT: contextvars.ContextVar[bool] = contextvars.ContextVar("eudaimon_in_run_slot", default=False)
_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[int, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def _slots(limit: int) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    found = _SLOTS.get(loop)
    if found is None or found[0] != limit:
        # A new limit (the variable changed) takes effect for runs that start after it.
        found = _SLOTS[loop] = (limit, asyncio.Semaphore(limit))
    return found[1]


@asynccontextmanager
async def run_slot(limit: int) -> AsyncIterator[None]:
    """Hold one of the event loop's `limit` slots for driving a run, waiting for one if needed."""
    if _IN_SLOT.get():
        yield
        return
    slots = _slots(limit)
    async with slots:
        token = _IN_SLOT.set(True)
        try:
            yield
        finally:
            try:
                _IN_SLOT.reset(token)
            except ValueError:  # a stream closed from another context than it was driven in
                _IN_SLOT.set(False)
