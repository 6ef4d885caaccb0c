"""Leases, snapshots and retention (DESIGN §5): one suite over every backend.

The `store` fixture (conftest.py) runs each test against MemoryStore, SqliteStore and
PostgresStore. Leases decide which process drives a run; snapshots are derived data whose loss
changes only speed; `delete_run` is retention. A backend that differs here would let two
workers drive one run, or resume from a stale snapshot.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from eudaimon.core.errors import LeaseHeld
from eudaimon.stores import EventStore
from eudaimon.stores.base import Lease, Snapshot

SHORT_TTL_S = 0.3


async def test_lease_is_exclusive(store: EventStore) -> None:
    """Invariant: while a lease is held, another owner cannot take it, and the refusal names the
    holder and how long it still has (so a waiting resumer knows whom it waits for)."""
    lease = await store.acquire_lease("run:r1", "worker-a", 30)

    with pytest.raises(LeaseHeld) as refused:
        await store.acquire_lease("run:r1", "worker-b", 30)

    assert lease == Lease("run:r1", "worker-a", 30)
    assert (refused.value.name, refused.value.owner) == ("run:r1", "worker-a")
    assert 0 < refused.value.expires_in_s <= 30


async def test_leases_with_different_names_are_independent(store: EventStore) -> None:
    """Invariant: a lease covers one name: holding `run:a` does not stop anyone taking `run:b`
    or `thread:a`."""
    await store.acquire_lease("run:a", "worker-a", 30)

    assert await store.acquire_lease("run:b", "worker-b", 30) == Lease("run:b", "worker-b", 30)
    assert await store.acquire_lease("thread:a", "worker-b", 30) == Lease("thread:a", "worker-b", 30)


async def test_lease_is_renewable_by_its_owner(store: EventStore) -> None:
    """Invariant: the owner renews its lease by acquiring it again (a live worker keeps its run),
    and the renewed lease still excludes everyone else."""
    await store.acquire_lease("run:r1", "worker-a", 30)

    renewed = await store.acquire_lease("run:r1", "worker-a", 60)

    assert renewed == Lease("run:r1", "worker-a", 60)
    with pytest.raises(LeaseHeld) as refused:
        await store.acquire_lease("run:r1", "worker-b", 30)
    assert refused.value.owner == "worker-a"


async def test_released_lease_is_free_and_only_its_owner_releases_it(store: EventStore) -> None:
    """Invariant: `release_lease` by a non-owner changes nothing; by the owner it frees the lease
    at once for anyone; releasing a lease nobody holds is a no-op."""
    await store.acquire_lease("run:r1", "worker-a", 30)

    await store.release_lease("run:r1", "worker-b")
    with pytest.raises(LeaseHeld) as refused:
        await store.acquire_lease("run:r1", "worker-c", 30)
    assert refused.value.owner == "worker-a"

    await store.release_lease("run:r1", "worker-a")
    assert await store.acquire_lease("run:r1", "worker-b", 30) == Lease("run:r1", "worker-b", 30)
    await store.release_lease("run:nobody-holds-this", "worker-a")


async def test_expired_lease_is_free_for_another_owner(store: EventStore) -> None:
    """Invariant: a lease its owner stopped renewing lapses after its ttl and another owner takes
    it (a crashed worker's run is taken over); the old owner is then the one refused."""
    await store.acquire_lease("run:r1", "crashed-worker", SHORT_TTL_S)

    await asyncio.sleep(SHORT_TTL_S * 2)  # a wait past the ttl, not a timing assertion
    taken = await store.acquire_lease("run:r1", "worker-b", 30)

    assert taken == Lease("run:r1", "worker-b", 30)
    with pytest.raises(LeaseHeld) as refused:
        await store.acquire_lease("run:r1", "crashed-worker", SHORT_TTL_S)
    assert refused.value.owner == "worker-b"


async def test_lease_holders_are_the_unexpired_leases_read_without_taking_them(store: EventStore) -> None:
    """Invariant: `lease_holders` names who holds each lease asked about, unexpired, with the time
    it has left, and leaves every lease as it was: a lease released, lapsed, or never taken is
    not in it; an owner's renewal and another owner's taking still behave as before the read.
    (`runs show` and a run's view say from it whether a process drives a running run.)"""
    await store.acquire_lease("run:live", "worker-a", 30)
    await store.acquire_lease("run:gone", "worker-b", 30)
    await store.release_lease("run:gone", "worker-b")
    await store.acquire_lease("run:lapsed", "crashed-worker", SHORT_TTL_S)
    await asyncio.sleep(SHORT_TTL_S * 2)  # a wait past the ttl, not a timing assertion

    held = await store.lease_holders(["run:live", "run:gone", "run:lapsed", "run:never", "run:live"])  # type: ignore[attr-defined]

    assert set(held) == {"run:live"}
    assert (held["run:live"].name, held["run:live"].owner) == ("run:live", "worker-a")
    assert 0 < held["run:live"].expires_in_s <= 30
    with pytest.raises(LeaseHeld):
        await store.acquire_lease("run:live", "worker-b", 30)  # the read took nothing
    assert await store.acquire_lease("run:lapsed", "worker-c", 30) == Lease("run:lapsed", "worker-c", 30)
    assert await store.lease_holders([]) == {}  # type: ignore[attr-defined]


async def test_lease_holders_answer_for_many_names_at_once(store: EventStore) -> None:
    """Invariant: a listing asks about every running run in one call: past a statement's
    parameter limit (SQLite's 999) every held lease is still found."""
    names = [f"run:r{i}" for i in range(1_200)]
    for name in names[::3]:
        await store.acquire_lease(name, "worker-a", 30)

    held = await store.lease_holders(names)  # type: ignore[attr-defined]

    assert sorted(held) == sorted(names[::3])


async def test_snapshot_keeps_the_newest_version(store: EventStore) -> None:
    """Invariant: per key the store keeps the snapshot of the highest version: an older one saved
    late (a slow writer) never replaces a newer one; an equal version replaces it."""
    await store.save_snapshot(Snapshot("run:r1", 5, "state@5"))
    await store.save_snapshot(Snapshot("run:r1", 3, "state@3"))
    assert await store.load_snapshot("run:r1") == Snapshot("run:r1", 5, "state@5")

    await store.save_snapshot(Snapshot("run:r1", 5, "state@5, rebuilt"))
    assert await store.load_snapshot("run:r1") == Snapshot("run:r1", 5, "state@5, rebuilt")

    await store.save_snapshot(Snapshot("run:r1", 9, "state@9"))
    await store.save_snapshot(Snapshot("thread:t1", 1, "thread state"))
    assert await store.load_snapshot("run:r1") == Snapshot("run:r1", 9, "state@9")
    assert await store.load_snapshot("thread:t1") == Snapshot("thread:t1", 1, "thread state")


async def test_absent_snapshot_loads_none(store: EventStore) -> None:
    """Invariant: a key without a snapshot loads None (the caller folds from the start), not an error."""
    assert await store.load_snapshot("run:never-snapshotted") is None


async def test_delete_snapshots_empties_and_counts(store: EventStore, samples: Any) -> None:
    """Invariant: `delete_snapshots` drops every snapshot, run and thread alike, returns how many,
    and leaves the journal untouched (snapshots are derived: only speed changes)."""
    events = samples.make_events("r1", [samples.started(), samples.attempt(0)])
    await store.append("r1", 0, events)
    for key in ("run:r1", "run:r2", "thread:t1"):
        await store.save_snapshot(Snapshot(key, 1, f"{key} data"))

    assert await store.delete_snapshots() == 3

    assert [await store.load_snapshot(k) for k in ("run:r1", "run:r2", "thread:t1")] == [None, None, None]
    assert await store.delete_snapshots() == 0
    assert await store.load("r1") == events


async def test_delete_run_removes_its_events_summary_and_snapshot_only(store: EventStore, samples: Any) -> None:
    """Invariant: `delete_run` (retention) removes the run's events, summary and `run:<id>`
    snapshot, leaves every other run, its snapshot and thread snapshots intact, ignores unknown
    runs, and frees the run id (a new journal for it starts again at seq 0)."""
    doomed = samples.make_events("doomed", [samples.started("bot", "t1"), samples.attempt(0)])
    kept = samples.make_events("kept", [samples.started("bot", "t1"), samples.attempt(0)])
    await store.append("doomed", 0, doomed)
    await store.append("kept", 0, kept)
    await store.save_snapshot(Snapshot("run:doomed", 1, "doomed state"))
    await store.save_snapshot(Snapshot("run:kept", 1, "kept state"))
    await store.save_snapshot(Snapshot("thread:t1", 1, "thread state"))

    await store.delete_run("doomed")
    await store.delete_run("never-existed")

    assert await store.load("doomed") == []
    assert await store.load_snapshot("run:doomed") is None
    assert [s.run_id for s in await store.list_runs()] == ["kept"]
    assert [s.run_id for s in await store.list_runs(thread_id="t1")] == ["kept"]
    assert await store.load("kept") == kept
    assert await store.load_snapshot("run:kept") == Snapshot("run:kept", 1, "kept state")
    assert await store.load_snapshot("thread:t1") == Snapshot("thread:t1", 1, "thread state")
    await store.append("doomed", 0, doomed[:1])
    assert await store.load("doomed") == doomed[:1]
