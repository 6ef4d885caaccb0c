"""Slots missed while no server was up: `catch_up="latest"` runs the latest of them once,
`"none"` skips them; a slot on time always runs. The run ids name schedule and slot, so firing
again (another server, a restart) starts nothing new. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from _queue_support import BACKENDS

from eudaimon import Agent
from eudaimon.models import FunctionModel
from eudaimon.runtime.process.schedules import KIND, Schedules, slot_run_id
from eudaimon.server import create_app
from eudaimon.server.context import ServerContext
from eudaimon.server.scheduling import fire_due
from eudaimon.stores.base import EventStore

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    if request.param == "sqlite":
        from eudaimon.stores.sqlite import SqliteStore

        made: EventStore = SqliteStore(tmp_path / "runs.db")
        yield made
        await made.close()
        return
    import uuid

    import psycopg
    from _backends_support import PG_DSN

    from eudaimon.stores.postgres import PostgresStore

    schema = f"eudaimon_test_{uuid.uuid4().hex}"
    made = PostgresStore(PG_DSN, schema=schema)
    yield made
    await made.close()
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
async def ctx(store: EventStore) -> AsyncIterator[ServerContext]:
    """A server's context without its lifespan: the runs it starts are stopped before the store
    closes (a run still appending while its schema is dropped deadlocks the drop)."""
    agent = Agent(FunctionModel(lambda request: "ok", "fixed"), name="morning", store=store)
    app = create_app(agent, store, recover=False, fire_schedules=False)
    made: ServerContext = app.state.eudaimon
    yield made
    await made.lines.aclose()
    await made.runner.aclose()


async def _hourly(store: EventStore) -> Schedules:
    schedules = Schedules(store)
    added = await schedules.add("morning", "0 * * * *", "good morning", schedule_id="hourly")
    # as if added at T0: backdate it (what a store written then would hold)
    await store.put_record(KIND, "hourly", replace(added, created_at=T0.isoformat()).to_json())  # type: ignore[attr-defined]
    return schedules


async def _runs(store: EventStore) -> list[str]:
    return sorted(r.run_id for r in await store.list_runs(limit=1000))


async def test_catch_up_latest_runs_the_latest_missed_slot_once(store: EventStore, ctx: ServerContext) -> None:
    await _hourly(store)
    now = T0 + timedelta(hours=5, minutes=30)  # slots 09:00 … 13:00 passed with no server up
    started = await fire_due(ctx, catch_up="latest", grace_s=60, now=now)
    assert started == [slot_run_id("hourly", T0 + timedelta(hours=5))]
    assert await fire_due(ctx, catch_up="latest", grace_s=60, now=now) == []
    [schedule] = await Schedules(store).list()
    assert schedule.last_run_id == started[0] and schedule.last_slot == (T0 + timedelta(hours=5)).isoformat()
    assert await _runs(store) == started


async def test_catch_up_none_skips_missed_slots_but_runs_one_on_time(store: EventStore, ctx: ServerContext) -> None:
    await _hourly(store)
    assert await fire_due(ctx, catch_up="none", grace_s=60, now=T0 + timedelta(hours=5, minutes=30)) == []
    on_time = T0 + timedelta(hours=6, seconds=5)
    started = await fire_due(ctx, catch_up="none", grace_s=60, now=on_time)
    assert started == [slot_run_id("hourly", T0 + timedelta(hours=6))]
    assert await _runs(store) == started


async def test_a_slot_started_elsewhere_is_not_started_again(store: EventStore, ctx: ServerContext) -> None:
    schedules = await _hourly(store)
    now = T0 + timedelta(hours=1, seconds=3)
    [run_id] = await fire_due(ctx, catch_up="none", grace_s=60, now=now)
    [schedule] = await schedules.list()
    # another server that read the schedule before this one noted the slot
    await store.put_record(KIND, "hourly", replace(schedule, last_slot=None, last_run_id=None).to_json())  # type: ignore[attr-defined]
    assert await fire_due(ctx, catch_up="none", grace_s=60, now=now) == []
    assert await _runs(store) == [run_id]
    assert [e.type for e in await store.load(run_id)].count("run_queued") == 1


async def test_a_pause_made_while_a_slot_fires_is_kept(store: EventStore) -> None:
    schedules = await _hourly(store)
    [read] = await schedules.list()  # a server read the schedule, then an operator paused it
    await schedules.pause("hourly")
    await schedules.fired(read, T0 + timedelta(hours=1), slot_run_id("hourly", T0 + timedelta(hours=1)))
    [kept] = await schedules.list()
    assert kept.paused is True and kept.last_slot == (T0 + timedelta(hours=1)).isoformat()
