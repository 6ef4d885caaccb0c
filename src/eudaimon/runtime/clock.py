"""Time and fresh ids: the runtime's only sources of non-determinism, kept in one place.

They enter the core as event fields, never the other way round.
"""

from __future__ import annotations

import functools
import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime

now: Callable[[], datetime] = functools.partial(datetime.now, UTC)
"""The current time in UTC (a partial, not a function: every event reads it)."""


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


# Run and message ids are 128 random bits from the OS, in hex: shaped like `uuid4().hex`, at a
# fraction of its cost (no UUID object, no version bits).


def new_run_id() -> str:
    return f"run_{os.urandom(16).hex()}"


_REQUESTS = random.Random()
"""Request ids' own generator, seeded from the OS: a program's `random.seed` does not repeat them."""
if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_REQUESTS.seed)  # a forked child draws its own


def new_request_id() -> str:
    """An id unique within its run, which is all a request id needs: drawn without a system
    call, since every step makes one."""
    return f"req_{_REQUESTS.getrandbits(64):016x}"


def new_message_id() -> str:
    return f"msg_{os.urandom(16).hex()}"
