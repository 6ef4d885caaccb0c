"""Time and fresh ids: the runtime's only sources of non-determinism, kept in one place.

They enter the core as event fields, never the other way round.
"""

from __future__ import annotations

import functools
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from eudaimon.runtime.loop.turns import take_turn

now: Callable[[], datetime] = functools.partial(datetime.now, UTC)
"""The current time in UTC (a partial, not a function: every event reads it)."""


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


def new_run_id() -> str:
    """32 hex digits, time first: the milliseconds since the epoch (48 bits), then 80 random bits
    from the OS (UUIDv7's layout, without a UUID object). Time first, so the runs in flight are
    neighbours in every index keyed by run (the journal's clustered `events` key first): with
    random ids each append touched a page of its own among all the runs ever written, and the
    cost of a step grew with the size of the file."""
    return f"run_{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


_REQUESTS = random.Random()
"""Request ids' own generator, seeded from the OS: a program's `random.seed` does not repeat them."""
if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_REQUESTS.seed)  # a forked child draws its own


def new_request_id() -> str:
    """An id unique within its run, which is all a request id needs: drawn without a system
    call, since every step makes one."""
    return f"req_{_REQUESTS.getrandbits(64):016x}"


def new_message_id() -> str:
    """128 random bits from the OS in hex, shaped like `uuid4().hex` at a fraction of its cost."""
    return f"msg_{os.urandom(16).hex()}"


@dataclass(frozen=True, slots=True)
class Clock:
    """Where a driver of the loop reads time, draws ids and jitter: a seam, not a setting.

    A process uses `SYSTEM_CLOCK`. A Temporal workflow drives the same loop with a clock made
    of `workflow.now()`, `workflow.time()` and `workflow.random()`, so that a replay of its
    history draws the same timestamps, request ids and backoffs as the live run did.
    """

    now: Callable[[], datetime]
    """The time an event is stamped with (UTC)."""
    monotonic_ms: Callable[[], float]
    """For durations: milliseconds on a clock that never goes back."""
    new_request_id: Callable[[], str]
    """A model attempt's id, unique within its run."""
    random: Callable[[], float]
    """Jitter in [0, 1) for backoffs."""
    turn: Callable[[], Awaitable[None]] = take_turn
    """Awaited before a step's work: the process's runs take turns with the rest of their event
    loop (`turns`). A workflow's loop is replayed, not shared, and must never wait on a timer
    its history does not hold: it passes `no_wait`."""


async def no_wait() -> None:
    """A turn that is always the caller's."""


SYSTEM_CLOCK = Clock(now, monotonic_ms, new_request_id, random.random)
"""The process's own clock, ids and randomness."""
