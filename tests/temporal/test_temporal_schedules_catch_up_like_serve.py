"""Slots a Temporal Schedule fires late (Temporal was down) follow the schedule's `catch_up`, as a
server's `--catch-up` does: "none" runs none of them, "latest" only the latest; a slot on time
always runs. The starter's activity decides (`Schedule.skips`), from the slot and the cron."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from eudaimon.runtime.process.schedules import Schedules
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine
from eudaimon.temporal._scheduled import ScheduledInput
from eudaimon.temporal._scheduled_start import ScheduledStarts

NOW = datetime(2026, 12, 7, 10, 30, tzinfo=UTC)


async def test_missed_slots_on_temporal_follow_catch_up(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """Invariant: for an hourly schedule read at 10:30, the 8:00 slot is skipped with "latest"
    (9:00 is due too) and with "none"; 10:00 (the latest, 30 min late) runs with "latest" and is
    skipped with "none"; 10:29:55 (5 s late) runs with either. The starter's activity, given a
    slot three hours late, starts no run with either and notes the slot as the schedule's last."""
    store = open_store(store_url)
    url = TemporalEngine(temporal_target, task_queue=task_queue).url
    schedules = Schedules(store)
    latest = await schedules.add("fleet", "0 * * * *", "hi", schedule_id="latest", engine=url)
    none = await schedules.add("fleet", "0 * * * *", "hi", schedule_id="none", engine=url, catch_up="none")

    eight, ten, just = NOW.replace(hour=8, minute=0), NOW.replace(minute=0), NOW - timedelta(seconds=5)
    assert latest.skips(eight, NOW) and none.skips(eight, NOW)
    assert not latest.skips(ten, NOW) and none.skips(ten, NOW)
    assert not latest.skips(just, NOW) and not none.skips(just, NOW)

    late = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=3)
    for schedule in (latest, none):
        started = await ActivityEnvironment().run(
            ScheduledStarts(store).start, ScheduledInput(schedule.id, late.isoformat())
        )
        assert started == ""
        assert (await schedules.get(schedule.id)).last_slot == late.isoformat()
    assert await store.list_runs(limit=10) == []
    await schedules.remove("latest")
    await schedules.remove("none")
    await store.close()
