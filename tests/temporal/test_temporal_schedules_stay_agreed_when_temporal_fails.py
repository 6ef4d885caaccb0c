"""A Temporal-owned schedule lives in two places, the store's record and the Temporal Schedule.
Pause, resume and remove change Temporal first and the record after, so a Temporal that does not
answer, or that no longer has the schedule, changes nothing: the record and Temporal still agree,
and the error says what to do (try again, or remove and add again). Pausing again what disagrees
brings the two back together."""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime

import pytest
from temporalio.client import Client
from typer.testing import CliRunner

from eudaimon.cli import app as cli
from eudaimon.runtime.process.schedules import KIND, Schedule, ScheduleEngineFailed, Schedules, temporal_schedule_id
from eudaimon.stores.records import records_of
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine


def _nobody_listening() -> str:
    with socket.socket() as s:  # a port bound and let go: nothing answers there
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _cli(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, list(args), env={"COLUMNS": "250", "NO_COLOR": "1"})
    return done.exit_code, done.output


async def test_a_temporal_schedule_deleted_behind_eudaimon_is_neither_paused_nor_resumed_in_the_record(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """Invariant: with the Temporal Schedule deleted outside eudaimon, pause (API and CLI) fails
    saying to remove and add again, and the record stays active; remove then succeeds."""
    store = open_store(store_url)
    try:
        schedules = Schedules(store)
        engine = TemporalEngine(temporal_target, task_queue=task_queue).url
        await schedules.add("fleet", "0 9 * * *", "hi", schedule_id="deleted-behind", engine=engine)
        await client.get_schedule_handle(temporal_schedule_id("deleted-behind")).delete()

        with pytest.raises(ScheduleEngineFailed) as failed:
            await schedules.pause("deleted-behind")
        said = str(failed.value)
        assert "was not paused" in said and "nothing was changed (it is still active" in said
        assert "`eudaimon schedules remove deleted-behind` and add it again" in said
        assert (await schedules.get("deleted-behind")).paused is False
        code, said = await asyncio.to_thread(_cli, "schedules", "pause", "deleted-behind", "--store", store_url)
        assert code == 1 and "was not paused" in said and "schedules remove deleted-behind" in said
        assert (await schedules.get("deleted-behind")).paused is False

        await schedules.remove("deleted-behind")  # a Temporal Schedule already gone is no error
        assert await schedules.list() == []
    finally:
        await store.close()


async def test_an_unreachable_temporal_changes_no_record(store_url: str) -> None:
    """Invariant: a schedule whose Temporal does not answer is not paused, resumed or removed in
    the store (the record is byte for byte as before), and the error says to try again once it
    answers; adding one there keeps nothing."""
    store = open_store(store_url)
    try:
        schedules, records = Schedules(store), records_of(store, what="schedules")
        engine = TemporalEngine(_nobody_listening(), task_queue="q-away").url
        for paused in (False, True):
            kept = Schedule(
                id=f"away-{paused}", agent="fleet", cron="0 9 * * *", input="hi", paused=paused,
                created_at=datetime.now(UTC).isoformat(), engine=engine,
            )  # fmt: skip
            assert await records.put_record(KIND, kept.id, kept.to_json(), only_new=True)
            before = await records.load_record(KIND, kept.id)
            assert before is not None
            for change in (schedules.pause(kept.id, not paused), schedules.remove(kept.id)):
                with pytest.raises(ScheduleEngineFailed) as failed:
                    await change
                assert "Try again once Temporal answers" in str(failed.value)
                assert engine in str(failed.value)
                after = await records.load_record(KIND, kept.id)
                assert after is not None and after.body == before.body

        with pytest.raises(ScheduleEngineFailed, match="nothing was kept"):
            await schedules.add("fleet", "0 9 * * *", "hi", schedule_id="never-kept", engine=engine)
        assert await records.load_record(KIND, "never-kept") is None
    finally:
        await store.close()


async def test_pausing_again_brings_record_and_temporal_back_together(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    """Invariant: after a pause the record and Temporal are both paused; if Temporal was unpaused
    behind eudaimon, pausing again pauses it there too (pause is idempotent on both sides)."""
    store = open_store(store_url)
    try:
        schedules = Schedules(store)
        engine = TemporalEngine(temporal_target, task_queue=task_queue).url
        await schedules.add("fleet", "0 9 * * *", "hi", schedule_id="re-paused", engine=engine)
        handle = client.get_schedule_handle(temporal_schedule_id("re-paused"))
        assert (await schedules.pause("re-paused")).paused
        assert (await handle.describe()).schedule.state.paused
        await handle.unpause(note="behind eudaimon's back")
        assert (await schedules.pause("re-paused")).paused
        assert (await handle.describe()).schedule.state.paused
        assert not (await schedules.resume("re-paused")).paused
        assert not (await handle.describe()).schedule.state.paused
        await schedules.remove("re-paused")
    finally:
        await store.close()
