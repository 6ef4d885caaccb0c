"""Leases the runtime relies on under load and stalls, on every backend (`store` fixture).

- A fenced append (`append(..., fence=Fence(name, owner))`) lands only while its owner holds
  the lease unexpired, checked in the append's own transaction; otherwise it raises
  `LeaseLost` and writes nothing (bug: a stalled process's commit landed after another took
  its run over).
- `renew_leases` renews many leases in one call, lapsed ones included as long as they still
  name their owner, and reports per lease; it never takes another owner's lease (bug: a busy
  process renewed each lease alone, late, and lost its own runs).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from eudaimon.core.errors import ConcurrencyConflict, LeaseLost
from eudaimon.stores import EventStore
from eudaimon.stores.base import Fence

SHORT_TTL_S = 0.3


async def test_a_fenced_append_lands_while_its_lease_is_held(store: EventStore, samples: Any) -> None:
    """The owner's commit lands; the fence changes nothing else (the seq fence still holds)."""
    await store.acquire_lease("run:r1", "me", 30)
    events = samples.make_events("r1", [samples.started()])
    await store.append("r1", 0, events, fence=Fence("run:r1", "me"))
    assert [e.seq for e in await store.load("r1")] == [0]
    with pytest.raises(ConcurrencyConflict):
        await store.append("r1", 0, events, fence=Fence("run:r1", "me"))


async def test_a_fenced_append_is_refused_once_another_owner_took_the_lease(store: EventStore, samples: Any) -> None:
    """After a takeover, the old owner's commit raises `LeaseLost` and nothing is written."""
    await store.acquire_lease("run:r1", "stalled", SHORT_TTL_S)
    await asyncio.sleep(SHORT_TTL_S * 1.5)
    await store.acquire_lease("run:r1", "taker", 30)
    with pytest.raises(LeaseLost):
        await store.append("r1", 0, samples.make_events("r1", [samples.started()]), fence=Fence("run:r1", "stalled"))
    assert await store.load("r1") == []


async def test_a_fenced_append_is_refused_once_its_lease_expired(store: EventStore, samples: Any) -> None:
    """A lease that lapsed (nobody took it yet) no longer covers a commit; nor does a lease
    never taken or given up."""
    await store.acquire_lease("run:r1", "stalled", SHORT_TTL_S)
    await asyncio.sleep(SHORT_TTL_S * 1.5)
    events = samples.make_events("r1", [samples.started()])
    with pytest.raises(LeaseLost):
        await store.append("r1", 0, events, fence=Fence("run:r1", "stalled"))
    with pytest.raises(LeaseLost):
        await store.append("r1", 0, events, fence=Fence("run:never-taken", "stalled"))
    await store.acquire_lease("run:r2", "me", 30)
    await store.release_lease("run:r2", "me")
    with pytest.raises(LeaseLost):
        await store.append("r1", 0, events, fence=Fence("run:r2", "me"))
    assert await store.load("r1") == []


async def test_renew_leases_renews_many_at_once_and_only_its_own(store: EventStore) -> None:
    """Held and lapsed-but-untaken leases are renewed (and then exclusive again); one taken by
    another owner, or gone, is reported as not renewed and left alone."""
    renew = store.renew_leases  # type: ignore[attr-defined]  # every store here has it; not in the protocol
    for i in range(450):  # more than one SQLite statement's worth
        await store.acquire_lease(f"run:{i}", "me", SHORT_TTL_S)
    await asyncio.sleep(SHORT_TTL_S * 1.5)  # all lapsed
    await store.acquire_lease("run:7", "taker", 30)
    await store.release_lease("run:8", "me")
    held = await renew([(f"run:{i}", "me") for i in range(450)] + [("run:none", "me")], 30)
    assert held == [i not in (7, 8) for i in range(450)] + [False]
    assert (await store.acquire_lease("run:7", "taker", 30)).owner == "taker"
    with pytest.raises(Exception, match="held by me"):
        await store.acquire_lease("run:3", "taker", 30)
    assert await renew([], 30) == []


async def test_a_fenced_append_takes_back_a_lapsed_lease_no_one_took(store: EventStore, samples: Any) -> None:
    """A busy process whose lease lapsed before its commit, with no one taking it, keeps its
    run: a fence with a lifetime takes the lease back, the commit lands, and the lease is
    exclusive again (bug: 10,000 runs lost their leases to their own process's load)."""
    await store.acquire_lease("run:r1", "busy", SHORT_TTL_S)
    await asyncio.sleep(SHORT_TTL_S * 1.5)
    await store.append("r1", 0, samples.make_events("r1", [samples.started()]), fence=Fence("run:r1", "busy", 30))
    assert [e.seq for e in await store.load("r1")] == [0]
    with pytest.raises(Exception, match="held by busy"):
        await store.acquire_lease("run:r1", "taker", 30)
