"""A driver keeps its leases for as long as it runs, and lets them go when it stops.

Keepers on one event loop share a single timer for their first renewal (`runtime/process/leases.py`),
so these tests hold several leases of different lifetimes at once: each must be renewed before
it lapses, whichever keeper the shared timer was set for, and a released one never again.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from eudaimon.core.errors import LeaseHeld, LeaseLost
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.stores import MemoryStore
from support.stores import RenewalCountingMemoryStore


async def test_held_leases_of_different_ttls_outlive_their_ttl_while_held() -> None:
    """Invariant: a held lease is renewed before it lapses, however many keepers of whatever
    lifetimes share the loop; no other owner can take it meanwhile and the holder stays valid."""
    store = MemoryStore()
    slow = LeaseKeeper(store, "run:slow", ttl_s=0.9)
    fast = LeaseKeeper(store, "run:fast", ttl_s=0.3)
    await slow.acquire()
    await fast.acquire()  # due before the timer armed for `slow`: the timer must move earlier
    try:
        await asyncio.sleep(1.2)  # over four of `fast`'s lifetimes, over one of `slow`'s

        fast.check()
        slow.check()
        for name in ("run:fast", "run:slow"):
            with pytest.raises(LeaseHeld):
                await store.acquire_lease(name, "someone-else", 30)
    finally:
        await fast.release()
        await slow.release()


async def test_released_lease_is_not_renewed_and_lapses_for_others() -> None:
    """Invariant: a keeper released before its first renewal never renews again, so the lease is
    free at once (released) and stays free (no stray renewal takes it back)."""
    store = MemoryStore()
    keeper = LeaseKeeper(store, "run:r", ttl_s=0.3)
    other = LeaseKeeper(store, "run:other", ttl_s=0.3)  # keeps the shared timer busy meanwhile
    await keeper.acquire()
    await other.acquire()
    try:
        await keeper.release()
        await asyncio.sleep(0.5)  # past the first renewal `keeper` would have made

        taken = await store.acquire_lease("run:r", "someone-else", 30)
        assert taken.owner == "someone-else"
        other.check()
    finally:
        await other.release()


async def test_overdue_leases_of_a_busy_process_are_renewed_in_one_statement() -> None:
    """Invariant: when a busy loop made every run's renewal late, the runs about to commit take
    their leases back together, in one store call, not one call per run.

    Bug (issue 20): each run's commit renewed its own overdue lease alone; 10,000 runs on a
    lagging loop issued thousands of single-lease statements."""
    store = RenewalCountingMemoryStore()
    keepers = [LeaseKeeper(store, f"run:{i}", ttl_s=0.3) for i in range(50)]
    for keeper in keepers:
        await keeper.acquire()
    try:
        time.sleep(0.25)  # the loop is blocked past two thirds of every lease: all overdue
        await asyncio.gather(*(keeper.ensure() for keeper in keepers))  # fifty commits about to start
        assert store.statements == 1 and store.renewed == 50
        for keeper in keepers:
            keeper.check()  # renewed: a whole lifetime ahead again
    finally:
        for keeper in keepers:
            await keeper.release()


async def test_a_lease_taken_by_another_process_stops_its_run_alone() -> None:
    """Invariant: renewals are shared, their outcomes are not: the one lease another owner took
    is lost (its run must stop) and every other lease of the batch stays held."""
    store = RenewalCountingMemoryStore()
    keepers = [LeaseKeeper(store, f"run:{i}", ttl_s=0.3) for i in range(10)]
    for keeper in keepers:
        await keeper.acquire()
    try:
        stolen = keepers[4]
        await store.release_lease(stolen.name, stolen.owner)  # e.g. its row swept after a stall
        await store.acquire_lease(stolen.name, "another-process", 30)
        await asyncio.sleep(0.5)  # past the first shared renewal
        assert not stolen.held
        with pytest.raises(LeaseLost):
            await stolen.ensure()
        for keeper in keepers:
            if keeper is not stolen:
                assert keeper.held
                keeper.check()
                await keeper.ensure()
        assert (await store.acquire_lease(stolen.name, "another-process", 30)).owner == "another-process"
    finally:
        for keeper in keepers:
            await keeper.release()
