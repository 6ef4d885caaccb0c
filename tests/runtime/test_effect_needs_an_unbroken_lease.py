"""An effect that may not run twice needs the lease held, without a break, since the last commit.

`LeaseKeeper.check_effect(since)` is what the driver asks immediately before invoking a WRITE
or IRREVERSIBLE tool. A lease that lapsed and was taken again (by this very owner) does not
count: someone else may have driven the run in between, and only a new commit can show that
nobody did.
"""

from __future__ import annotations

import time

import pytest

from eudaimon.core.errors import LeaseLost
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.stores import MemoryStore


async def test_an_effect_is_refused_when_the_lease_was_taken_again_after_the_commit() -> None:
    """Invariant: `check_effect` passes for a commit made while the lease was held, and
    refuses one made before the current holding began (a lease re-taken after a lapse)."""
    store = MemoryStore()
    keeper = LeaseKeeper(store, "run:r", ttl_s=30)
    await keeper.acquire()
    try:
        committed = time.monotonic()
        keeper.check_effect(committed)
        await keeper.acquire()  # taken again, as after a lapse nobody else used
        with pytest.raises(LeaseLost):
            keeper.check_effect(committed)
        keeper.check_effect(time.monotonic())  # a commit made since proves nobody else acted
    finally:
        await keeper.release()


async def test_an_effect_is_refused_once_the_lease_is_released() -> None:
    """Invariant: after `release` no effect passes the check, whatever was committed."""
    store = MemoryStore()
    keeper = LeaseKeeper(store, "run:r", ttl_s=30)
    await keeper.acquire()
    await keeper.release()
    with pytest.raises(LeaseLost):
        keeper.check_effect(time.monotonic())
