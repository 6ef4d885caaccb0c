"""The `EventStore` contract (DESIGN §5), one suite run against every backend: the journal
(compare-and-append, load, list_runs), retention, leases and snapshots.

The `store` fixture (conftest.py) is parametrized over the backends; every test here must pass
for each of them, so a behaviour of `MemoryStore` is a behaviour of `SqliteStore` and later
`PostgresStore`.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta, timezone
from typing import Any

import pytest

from eudaimon.core.errors import ConcurrencyConflict, CorruptEvent, LeaseHeld
from eudaimon.core.events import EVENT_TYPES, Event, RunCompleted, RunStarted
from eudaimon.stores import EventStore, RunSummary
from eudaimon.stores.base import Lease, Snapshot


async def test_events_of_every_type_round_trip(store: EventStore, samples: Any) -> None:
    """Invariant: what is appended is loaded back equal, field for field, for every event type
    (a store that drops or mangles a field would change the fold after a restart)."""
    payloads = samples.every_payload()
    assert {type(p) for p in payloads} == set(EVENT_TYPES)
    events = samples.make_events("run-all", payloads)
    await store.append("run-all", 0, events[:1])
    await store.append("run-all", 1, events[1:7])
    await store.append("run-all", 7, events[7:])

    loaded = await store.load("run-all")

    assert loaded == events
    assert [e.type for e in loaded] == [p.type for p in payloads]


async def test_event_time_keeps_its_offset(store: EventStore, samples: Any) -> None:
    """Invariant: `at` is loaded as the same instant with the same UTC offset it was written with."""
    plus_two = timezone(timedelta(hours=2))
    event = Event.of("run-tz", 0, samples.T0.astimezone(plus_two), samples.started())
    await store.append("run-tz", 0, [event])

    (loaded,) = await store.load("run-tz")

    assert loaded.at == event.at
    assert loaded.at.utcoffset() == timedelta(hours=2)


@pytest.mark.parametrize("after_seq", [-1, 0, 4, 17, 18, 100])
async def test_load_after_seq_returns_only_later_events(store: EventStore, samples: Any, after_seq: int) -> None:
    """Invariant: `load(run, after_seq)` is exactly the events with seq > after_seq, in seq order
    (the runtime tails a journal with it; a missing or repeated event would be folded wrong)."""
    events = samples.make_events("run-tail", samples.every_payload())
    await store.append("run-tail", 0, events)

    assert await store.load("run-tail", after_seq) == events[after_seq + 1 :]


async def test_unknown_run_loads_empty(store: EventStore) -> None:
    """Invariant: an unknown run is `[]`, not an error (callers decide whether that is RunNotFound)."""
    assert await store.load("no-such-run") == []
    assert await store.load("no-such-run", after_seq=3) == []


@pytest.mark.parametrize(("expected_seq", "actual"), [(0, 3), (2, 3), (4, 3), (99, 3)])
async def test_wrong_expected_seq_conflicts_and_writes_nothing(
    store: EventStore, samples: Any, expected_seq: int, actual: int
) -> None:
    """Invariant: append is compare-and-append: a stale or future `expected_seq` raises
    ConcurrencyConflict carrying the journal's real next seq, and writes nothing at all."""
    events = samples.make_events("run-cas", [samples.started(), samples.attempt(0), samples.attempt(1)])
    await store.append("run-cas", 0, events)
    before = await store.list_runs()
    extra = samples.make_events("run-cas", [samples.attempt(7)], start=expected_seq)

    with pytest.raises(ConcurrencyConflict) as raised:
        await store.append("run-cas", expected_seq, extra)

    conflict = raised.value
    assert (conflict.run_id, conflict.expected_seq, conflict.actual_seq) == ("run-cas", expected_seq, actual)
    assert await store.load("run-cas") == events
    assert await store.list_runs() == before


async def test_new_run_must_start_at_seq_zero(store: EventStore, samples: Any) -> None:
    """Invariant: a run that does not exist has next seq 0; appending elsewhere conflicts, writes nothing."""
    events = samples.make_events("run-new", [samples.started()], start=1)

    with pytest.raises(ConcurrencyConflict) as raised:
        await store.append("run-new", 1, events)

    assert raised.value.actual_seq == 0
    assert await store.load("run-new") == []
    assert await store.list_runs() == []


async def test_same_seq_appended_concurrently_is_won_once(store: EventStore, samples: Any) -> None:
    """Invariant: the append of a seq is a fence: of many concurrent appends at one seq exactly one
    wins, every other one gets ConcurrencyConflict (so exactly one process runs a `tool_started`)."""
    await store.append("run-race", 0, samples.make_events("run-race", [samples.started()]))
    contenders = [
        store.append("run-race", 1, samples.make_events("run-race", [samples.attempt(1, f"writer-{i}")], start=1))
        for i in range(10)
    ]

    outcomes = await asyncio.gather(*contenders, return_exceptions=True)

    assert sum(o is None for o in outcomes) == 1
    assert all(isinstance(o, ConcurrencyConflict) for o in outcomes if o is not None)
    loaded = await store.load("run-race")
    assert [e.seq for e in loaded] == [0, 1]
    winner = outcomes.index(None)
    assert loaded[1].data.request_id == f"writer-{winner}"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "batch",
    [
        pytest.param([(3, "run-gap"), (5, "run-gap")], id="gap"),
        pytest.param([(3, "run-gap"), (3, "run-gap")], id="duplicate-seq"),
        pytest.param([(4, "run-gap")], id="starts-after-expected"),
        pytest.param([(3, "run-gap"), (4, "other-run")], id="foreign-run"),
    ],
)
async def test_batch_that_does_not_follow_on_is_refused(
    store: EventStore, samples: Any, batch: list[tuple[int, str]]
) -> None:
    """Invariant: seqs are gap-free per run: a batch whose seqs do not run consecutively from
    `expected_seq`, or that names another run, is refused whole (CorruptEvent), nothing written."""
    events = samples.make_events("run-gap", [samples.started(), samples.attempt(0), samples.attempt(1)])
    await store.append("run-gap", 0, events)
    bad = [Event.of(run, seq, samples.T0, samples.attempt(seq)) for seq, run in batch]

    with pytest.raises(CorruptEvent):
        await store.append("run-gap", 3, bad)

    assert await store.load("run-gap") == events
    assert await store.load("other-run") == []
    assert (await store.list_runs())[0].event_count == 3


async def test_first_event_must_be_run_started(store: EventStore, samples: Any) -> None:
    """Invariant: a journal starts with `run_started`; a run cannot be created by any other event."""
    with pytest.raises(CorruptEvent):
        await store.append("run-headless", 0, samples.make_events("run-headless", [samples.attempt(0)]))

    assert await store.load("run-headless") == []
    assert await store.list_runs() == []


async def test_empty_append_writes_nothing(store: EventStore, samples: Any) -> None:
    """Invariant: appending no events is a no-op, even at a seq that would conflict."""
    await store.append("run-empty", 0, [])
    await store.append("run-empty", 5, [])

    assert await store.load("run-empty") == []
    assert await store.list_runs() == []


async def test_list_runs_summarizes_each_run(store: EventStore, samples: Any) -> None:
    """Invariant: a run's summary (agent, thread, first and last time, event count, last type) is
    kept up to date by every append, without folding the run."""
    events = samples.make_events("run-sum", [samples.started("bot", "thread-1"), samples.attempt(0)])
    events.append(Event.of("run-sum", 2, samples.T0 + timedelta(minutes=5), RunCompleted(output="ok")))
    await store.append("run-sum", 0, events[:2])
    await store.append("run-sum", 2, events[2:])

    (summary,) = await store.list_runs()

    assert summary == RunSummary(
        run_id="run-sum",
        agent="bot",
        thread_id="thread-1",
        created_at=events[0].at,
        updated_at=events[2].at,
        event_count=3,
        last_event_type="run_completed",
    )


async def test_list_runs_is_most_recently_updated_first_with_limit_and_thread(store: EventStore, samples: Any) -> None:
    """Invariant: `list_runs` orders by last update (newest first), honours `limit`, and filters by
    thread; an append to an old run moves it to the front."""
    t0 = samples.T0
    for minute, (run, thread) in enumerate([("a", "t1"), ("b", "t2"), ("c", "t1"), ("d", None)]):
        started = RunStarted(agent=f"agent-{run}", input="", messages=(), thread_id=thread)
        await store.append(run, 0, [Event.of(run, 0, t0 + timedelta(minutes=minute), started)])
    await store.append("a", 1, [Event.of("a", 1, t0 + timedelta(minutes=10), samples.attempt(0))])

    assert [s.run_id for s in await store.list_runs()] == ["a", "d", "c", "b"]
    assert [s.run_id for s in await store.list_runs(limit=2)] == ["a", "d"]
    assert [s.run_id for s in await store.list_runs(thread_id="t1")] == ["a", "c"]
    assert [s.run_id for s in await store.list_runs(thread_id="t1", limit=1)] == ["a"]
    assert await store.list_runs(thread_id="nobody") == []
    assert [s.agent for s in await store.list_runs(thread_id="t2")] == ["agent-b"]


async def test_list_runs_puts_the_run_made_first_first_among_runs_updated_at_once(
    store: EventStore, samples: Any
) -> None:
    """Invariant: runs whose last events carry the same time list in the order they were made,
    so a listing is stable from call to call."""
    for run in ("m", "k", "z"):
        await store.append(run, 0, [Event.of(run, 0, samples.T0, samples.started())])

    assert [s.run_id for s in await store.list_runs()] == ["m", "k", "z"]
    assert [s.run_id for s in await store.list_runs(limit=2)] == ["m", "k"]


async def test_list_runs_interleaves_ended_and_live_runs_by_last_update(store: EventStore, samples: Any) -> None:
    """Invariant: ended runs and runs still going (live, paused, abandoned) are listed in one
    order, by last update, whatever the limit; the newest ended runs are never crowded out by
    older live ones, nor live ones by ended ones (SQLite keeps only ended runs in an index)."""
    t0 = samples.T0
    ends = {"e1": 1, "e2": 5, "e3": 9}  # minutes: each ended run ends then
    live = {"l1": 3, "l2": 7, "l3": 11}  # minutes: each live run's last event
    for n, run in enumerate([*ends, *live]):
        await store.append(run, 0, [Event.of(run, 0, t0 + timedelta(seconds=n), samples.started())])
    for run, minute in ends.items():
        await store.append(run, 1, [Event.of(run, 1, t0 + timedelta(minutes=minute), RunCompleted(output="ok"))])
    for run, minute in live.items():
        await store.append(run, 1, [Event.of(run, 1, t0 + timedelta(minutes=minute), samples.attempt(0))])

    newest_first = ["l3", "e3", "l2", "e2", "l1", "e1"]
    assert [s.run_id for s in await store.list_runs()] == newest_first
    for limit in range(1, 7):
        assert [s.run_id for s in await store.list_runs(limit=limit)] == newest_first[:limit]
    assert [s.is_finished for s in await store.list_runs()] == [False, True, False, True, False, True]


async def test_delete_run_removes_events_summary_and_run_snapshot(store: EventStore, samples: Any) -> None:
    """Invariant: retention deletes a run whole (events, summary, its snapshot) and nothing else;
    deleting an unknown run is a no-op; the id is then free (next seq 0 again)."""
    for run in ("run-old", "run-kept"):
        await store.append(run, 0, samples.make_events(run, [samples.started(), samples.attempt(0)]))
    await store.save_snapshot(Snapshot("run:run-old", 1, "{}"))
    await store.save_snapshot(Snapshot("thread:t", 4, "{}"))

    await store.delete_run("run-old")
    await store.delete_run("never-existed")

    assert await store.load("run-old") == []
    assert [s.run_id for s in await store.list_runs()] == ["run-kept"]
    assert len(await store.load("run-kept")) == 2
    assert await store.load_snapshot("run:run-old") is None
    assert await store.load_snapshot("thread:t") == Snapshot("thread:t", 4, "{}")
    await store.append("run-old", 0, samples.make_events("run-old", [samples.started()]))
    assert len(await store.load("run-old")) == 1


async def test_lease_is_exclusive_until_released_or_expired(store: EventStore) -> None:
    """Invariant: one owner holds a lease at a time: another owner gets LeaseHeld (naming the
    holder) until the holder releases it or it expires; the holder may renew; a non-holder's
    release does nothing; leases of different names are independent."""
    assert await store.acquire_lease("run:r", "alice", 30) == Lease("run:r", "alice", 30)
    with pytest.raises(LeaseHeld) as raised:
        await store.acquire_lease("run:r", "bob", 30)
    assert raised.value.owner == "alice"
    assert 0 < raised.value.expires_in_s <= 30
    assert await store.acquire_lease("run:r", "alice", 60) == Lease("run:r", "alice", 60)  # renewal
    assert await store.acquire_lease("thread:t", "bob", 30) == Lease("thread:t", "bob", 30)

    await store.release_lease("run:r", "bob")  # not the holder: ignored
    with pytest.raises(LeaseHeld):
        await store.acquire_lease("run:r", "bob", 30)
    await store.release_lease("run:r", "alice")
    assert await store.acquire_lease("run:r", "bob", 30) == Lease("run:r", "bob", 30)


async def test_expired_lease_can_be_taken_over(store: EventStore) -> None:
    """Invariant: a lease whose holder stopped renewing (a crashed process) lapses after its ttl,
    and another owner can then take it over without anyone releasing it."""
    await store.acquire_lease("run:crashed", "dead-worker", 0.05)
    await asyncio.sleep(0.15)

    assert await store.acquire_lease("run:crashed", "new-worker", 30) == Lease("run:crashed", "new-worker", 30)
    with pytest.raises(LeaseHeld):
        await store.acquire_lease("run:crashed", "dead-worker", 30)


async def test_snapshot_keeps_the_newest_version(store: EventStore) -> None:
    """Invariant: a snapshot is replaced only by one of the same or a newer version (a slow writer
    cannot roll a run's snapshot back); deleting snapshots reports how many went."""
    assert await store.load_snapshot("run:s") is None
    await store.save_snapshot(Snapshot("run:s", 10, '{"v": 10}'))
    await store.save_snapshot(Snapshot("run:s", 7, '{"v": 7}'))
    assert await store.load_snapshot("run:s") == Snapshot("run:s", 10, '{"v": 10}')
    await store.save_snapshot(Snapshot("run:s", 10, '{"v": "10b"}'))
    await store.save_snapshot(Snapshot("thread:t", 1, "{}"))
    assert await store.load_snapshot("run:s") == Snapshot("run:s", 10, '{"v": "10b"}')
    await store.save_snapshot(Snapshot("run:s", 12, '{"v": 12}'))
    assert await store.load_snapshot("run:s") == Snapshot("run:s", 12, '{"v": 12}')

    assert await store.delete_snapshots() == 2
    assert await store.load_snapshot("run:s") is None
    assert await store.delete_snapshots() == 0
