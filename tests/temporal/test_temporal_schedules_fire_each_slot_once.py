"""On Temporal, a schedule is a Temporal Schedule: adding one for a fleet's agent creates it,
each slot Temporal fires starts exactly one run under the id eudaimon derives from the schedule
and the slot (a second start of the slot finds the first), and the run completes in the journal
like any other; pause stops the firing, remove deletes the Temporal Schedule, and `eudaimon
serve`'s scheduler leaves a schedule Temporal owns alone."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from fleet_agent import make
from temporalio.client import Client, ScheduleHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment

from eudaimon import Agent
from eudaimon.core.events import RunQueued, RunStarted
from eudaimon.runtime.process.schedules import Schedule, Schedules, slot_run_id, temporal_schedule_id
from eudaimon.server import scheduling
from eudaimon.server.context import ServerContext
from eudaimon.server.driving import Runner
from eudaimon.server.hub import Hub
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import records_of
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker
from eudaimon.temporal._scheduled import ScheduledInput
from eudaimon.temporal._scheduled_start import ScheduledStarts

INPUT = "read then write"
PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture(params=["sqlite", "postgres"])
def journal_url(request: pytest.FixtureRequest, store_url: str) -> Iterator[str]:
    """The journal on SQLite (`store_url`) or in a PostgreSQL database of its own, dropped after."""
    if request.param == "sqlite":
        yield store_url
        return
    name = f"eudaimon_tsched_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG_DSN.rpartition('/')[0]}/{name}"
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.asynccontextmanager
async def fleet(
    client: Client, target: str, task_queue: str, store_url: str
) -> AsyncIterator[tuple[Agent, EventStore]]:
    """A worker in this process whose agent is built with the fleet's engine, as the
    application's is (the starter activity starts runs through it)."""
    store = open_store(store_url)
    agent = make(store=store, engine=TemporalEngine(target, task_queue=task_queue))
    worker = create_worker(client, task_queue=task_queue, agent=agent, spec="fleet_agent:make", store=store)
    async with worker:
        yield agent, store
    await agent.aclose()
    await store.close()


def _slots(schedule: Schedule, after: datetime, count: int) -> list[datetime]:
    found = []
    for slot in schedule.slots(after):
        found.append(slot)
        if len(found) == count:
            return found
    return found


async def _runs_of(store: EventStore, schedule_id: str) -> list[str]:
    return sorted(r.run_id for r in await store.list_runs(limit=10_000) if r.run_id.startswith(f"sched-{schedule_id}-"))


async def _completed(store: EventStore, run_id: str, timeout_s: float = 60.0) -> list[str]:
    for _ in range(int(timeout_s / 0.1)):
        types = [e.type for e in await store.load(run_id)]
        if types and types[-1] in ("run_completed", "run_failed", "run_cancelled"):
            return types
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end within {timeout_s}s: {[e.type for e in await store.load(run_id)]}")


async def _new_run(store: EventStore, schedule_id: str, before: list[str], timeout_s: float = 60.0) -> str:
    for _ in range(int(timeout_s / 0.1)):
        fresh = [r for r in await _runs_of(store, schedule_id) if r not in before]
        if fresh:  # the earliest: a schedule every second may fire twice between two looks
            return fresh[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"schedule {schedule_id} started no run within {timeout_s}s")


async def _last_slot(handle: ScheduleHandle, count: int) -> datetime:
    for _ in range(100):
        actions = (await handle.describe()).info.recent_actions
        if len(actions) >= count:
            return actions[-1].scheduled_at
        await asyncio.sleep(0.1)
    raise AssertionError("Temporal noted no action")


async def test_a_triggered_temporal_schedule_starts_one_run_per_slot_under_the_derived_id(
    client: Client, temporal_target: str, task_queue: str, journal_url: str, ledger: Path
) -> None:
    """Invariant: `Schedules.add(engine=…)` creates the Temporal Schedule (the cron, the zone,
    the starter on the agent's queue); each trigger starts one run, whose id is
    `slot_run_id(schedule, Temporal's scheduled time)` and which completes with `run_queued`,
    `run_started` and the principal `schedule:ID`; running the starter's activity again for
    that slot starts nothing new (the journal and the run's workflow are the first's). On SQLite
    and PostgreSQL."""
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    sid = f"mornings-{task_queue}"  # one Temporal namespace serves every test: ids of its own
    async with fleet(client, temporal_target, task_queue, journal_url) as (_, store):
        schedules = Schedules(store)
        added = await schedules.add(
            "fleet", "0 9 * * 1-5", INPUT, timezone="Europe/Paris", schedule_id=sid, engine=engine.url
        )
        handle = client.get_schedule_handle(temporal_schedule_id(sid))
        described = await handle.describe()
        assert described.schedule.spec.time_zone_name == "Europe/Paris"
        upcoming = list(described.info.next_action_times[:3])
        assert upcoming == _slots(added, upcoming[0] - timedelta(seconds=1), 3)  # Temporal's slots are cronsim's
        assert described.schedule.action.workflow == "eudaimon.scheduled"  # type: ignore[attr-defined]
        assert described.schedule.action.task_queue == task_queue  # type: ignore[attr-defined]
        assert added.engine == engine.url

        seen: list[str] = []
        for count in (1, 2):
            await handle.trigger()
            run_id = await _new_run(store, sid, seen)
            slot = await _last_slot(handle, count)
            assert run_id == slot_run_id(sid, slot)
            types = await _completed(store, run_id)
            assert types[:2] == ["run_queued", "run_started"] and types[-1] == "run_completed"
            first = (await store.load(run_id))[0].data
            assert isinstance(first, RunQueued) and first.principal == f"schedule:{sid}" and first.input == INPUT
            seen.append(run_id)
            await asyncio.sleep(1.1)  # the next trigger is another second: another slot

        again = await ActivityEnvironment().run(ScheduledStarts(store).start, ScheduledInput(sid, slot.isoformat()))
        assert again == seen[-1]
        events = await store.load(seen[-1])
        assert sum(isinstance(e.data, RunQueued) for e in events) == 1
        assert sum(isinstance(e.data, RunStarted) for e in events) == 1
        assert events[-1].type == "run_completed"
        assert await _runs_of(store, sid) == sorted(seen)
        history = await client.get_workflow_handle(seen[-1]).fetch_history()
        assert history.events[0].workflow_execution_started_event_attributes.attempt == 1
        upcoming, last = await schedules.times(await schedules.get(sid), datetime.now(UTC))
        assert upcoming is not None and upcoming > datetime.now(UTC) and last == slot
        await schedules.remove(sid)


async def test_pause_stops_temporal_firing_and_remove_deletes_the_temporal_schedule(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Invariant: a schedule every second fires on Temporal; after `pause`, the Temporal Schedule
    is paused, shows no next time, and no run starts in the next 3 seconds; `pause(False)` fires
    again; `remove` deletes the Temporal Schedule (describe: not found) and the record."""
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    async with fleet(client, temporal_target, task_queue, store_url) as (_, store):
        schedules = Schedules(store)
        added = await schedules.add("fleet", "* * * * * *", INPUT, schedule_id="every-second", engine=engine.url)
        handle = client.get_schedule_handle(temporal_schedule_id("every-second"))
        upcoming = list((await handle.describe()).info.next_action_times[:3])
        assert upcoming == _slots(added, upcoming[0] - timedelta(seconds=1), 3)  # seconds first, as eudaimon reads
        first = await _new_run(store, "every-second", [])
        await _completed(store, first)

        await schedules.pause("every-second")
        assert (await handle.describe()).schedule.state.paused
        assert (await schedules.times(await schedules.get("every-second"), datetime.now(UTC)))[0] is None
        await asyncio.sleep(1.5)  # a starter fired just before the pause may still start its slot
        paused_at = await _runs_of(store, "every-second")
        await asyncio.sleep(3)
        assert await _runs_of(store, "every-second") == paused_at

        await schedules.pause("every-second", paused=False)
        resumed = await _new_run(store, "every-second", paused_at)
        await _completed(store, resumed)

        await schedules.remove("every-second")
        with pytest.raises(RPCError) as gone:
            await handle.describe()
        assert gone.value.status is RPCStatusCode.NOT_FOUND
        assert await schedules.list() == []
        await asyncio.sleep(1.5)  # a starter in flight reads no schedule: it starts nothing
        settled = await _runs_of(store, "every-second")
        await asyncio.sleep(2)
        assert await _runs_of(store, "every-second") == settled


async def test_serve_never_fires_a_schedule_temporal_owns(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Invariant: with slots due (a schedule every second, read a minute on), the server's
    scheduler serving the same agent starts no run of a Temporal-owned schedule and notes no slot."""
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    async with fleet(client, temporal_target, task_queue, store_url) as (agent, store):
        schedules = Schedules(store)
        owned = await schedules.add("fleet", "* * * * * *", INPUT, schedule_id="owned", engine=engine.url)
        await schedules.pause("owned")  # Temporal stops; the record says paused: unpause it in the record only
        record = await schedules.get("owned")
        assert record.engine and record.paused
        hub = Hub(store)
        ctx = ServerContext(agents={"fleet": agent}, store=store, auth=None, hub=hub, runner=Runner(hub))
        later = datetime.now(UTC) + timedelta(minutes=1)
        unpaused = replace(record, paused=False)
        assert unpaused.due(later), "slots are due: a server firing it would start runs"
        await records_of(store, what="the test").put_record("schedule", "owned", unpaused.to_json())

        assert await scheduling.fire_due(ctx, now=later) == []

        assert await _runs_of(store, "owned") == []
        assert (await schedules.get("owned")).last_slot == owned.last_slot
        await schedules.remove("owned")
