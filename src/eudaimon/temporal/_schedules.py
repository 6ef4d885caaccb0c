"""The Temporal Schedules behind the schedules a `TemporalEngine` owns (`runtime.process.schedules`).

One Temporal Schedule per eudaimon schedule, id `eudaimon-sched-{id}`: its spec is the cron
expression in the schedule's time zone, its action starts the starter workflow
(`_scheduled.ScheduledWorkflow`) on the engine's task queue, which starts the slot's run under
the id eudaimon derives. Overlap is allowed (each starter is short and each slot its own run; a
run that outlives the next slot runs beside the next, as with `eudaimon serve`). Missed slots:
`catch_up="none"` gives a catch-up window of `LATE_AFTER_S` (Temporal fires nothing older),
`"latest"` a year, and the starter skips each missed slot but the latest (`Schedule.skips`).

Cron: eudaimon reads five fields, or six with seconds first (cronsim); Temporal reads five, six
with a year last, or seven with seconds first and a year last — so six fields gain a year `*`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio.client import (
    Client,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.client import (
    Schedule as TemporalSchedule,
)
from temporalio.service import RPCError, RPCStatusCode

from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.process.schedules import LATE_AFTER_S, Schedule, temporal_schedule_id
from eudaimon.temporal._scheduled import SCHEDULED, ScheduledInput

YEAR = timedelta(days=365)


def temporal_cron(cron: str) -> str:
    """`cron` as Temporal reads it (six fields, seconds first, gain a year)."""
    fields = cron.split()
    return " ".join([*fields, "*"]) if len(fields) == 6 else " ".join(fields)


async def create(client: Client, task_queue: str, schedule: Schedule) -> None:
    """Create the Temporal Schedule of `schedule`.

    Raises:
        ConfigurationError: Temporal has one of that id already, or refused the spec.
    """
    window = timedelta(seconds=LATE_AFTER_S) if schedule.catch_up == "none" else YEAR
    spec = TemporalSchedule(
        action=ScheduleActionStartWorkflow(
            SCHEDULED,
            ScheduledInput(schedule.id),
            id=temporal_schedule_id(schedule.id),  # Temporal appends each action's scheduled time
            task_queue=task_queue,
        ),
        spec=ScheduleSpec(cron_expressions=[temporal_cron(schedule.cron)], time_zone_name=schedule.timezone),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.ALLOW_ALL, catchup_window=window),
        state=ScheduleState(paused=schedule.paused, note=f"eudaimon schedule {schedule.id} of agent {schedule.agent}"),
    )
    try:
        await client.create_schedule(temporal_schedule_id(schedule.id), spec)
    except ScheduleAlreadyRunningError:
        raise ConfigurationError(
            f"Temporal has a schedule {temporal_schedule_id(schedule.id)!r} already; remove it or choose another id"
        ) from None
    except RPCError as exc:
        raise ConfigurationError(f"Temporal refused schedule {schedule.id!r}: {exc.message}") from None


async def pause(client: Client, schedule_id: str, paused: bool) -> None:
    handle = client.get_schedule_handle(temporal_schedule_id(schedule_id))
    note = "paused with `eudaimon schedules pause`" if paused else "resumed with `eudaimon schedules pause --resume`"
    await (handle.pause(note=note) if paused else handle.unpause(note=note))


async def remove(client: Client, schedule_id: str) -> None:
    try:
        await client.get_schedule_handle(temporal_schedule_id(schedule_id)).delete()
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise


async def times(client: Client, schedule_id: str) -> tuple[datetime | None, datetime | None]:
    """Temporal's next action time and the scheduled time of its last action (None: none, or
    no such Temporal Schedule any more)."""
    try:
        described = await client.get_schedule_handle(temporal_schedule_id(schedule_id)).describe()
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise
        return None, None
    info = described.info
    upcoming = None if described.schedule.state.paused else next(iter(info.next_action_times), None)
    last = info.recent_actions[-1].scheduled_at if info.recent_actions else None
    return upcoming, last
