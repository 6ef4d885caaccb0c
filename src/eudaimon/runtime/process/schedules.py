"""Schedules: an agent started with a given input at the slots of a cron expression.

A schedule is a record in the store (`stores.records`, kind `schedule`), so every server on
one store sees the same schedules and a restart loses none. A server fires a slot by starting
the run whose id the schedule and the slot name (`slot_run_id`): a second server firing the
same slot finds the run journaled and starts nothing, so each slot runs once whichever servers
are up (`server.scheduling`). Cron expressions are read by `cronsim` (extra `schedules`): five
fields, or six with seconds first; slots are reckoned in the schedule's time zone (IANA name),
so "0 9 * * 1-5" means nine on weekday mornings there, across daylight-saving changes.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from eudaimon._extras import needs
from eudaimon.core.errors import ConfigurationError, EudaimonError
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore, records_of

KIND = "schedule"
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class UnknownSchedule(EudaimonError, KeyError):
    """No schedule has this id (it was never added, or was removed)."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """An agent run at each slot of `cron` in `timezone`, with `input` (on `thread_id` if given)."""

    id: str
    agent: str
    cron: str
    input: str
    timezone: str = "UTC"
    thread_id: str | None = None
    paused: bool = False
    created_at: str = ""
    """ISO time it was added: slots before it never fire."""
    last_slot: str | None = None
    """ISO time of the last slot a server fired (or skipped as missed)."""
    last_run_id: str | None = None

    def slots(self, after: datetime) -> Iterator[datetime]:
        """The slots strictly after `after`, in UTC, forever."""
        with needs("schedules", "a schedule's cron expression"):
            from cronsim import CronSim
        zone = ZoneInfo(self.timezone)
        for slot in CronSim(self.cron, after.astimezone(zone)):
            yield slot.astimezone(UTC)

    def next_slot(self, after: datetime) -> datetime:
        return next(self.slots(after))

    def due(self, now: datetime) -> list[datetime]:
        """The slots after the last one fired (or its creation), up to `now`, oldest first; at
        most the last 1,000 (a schedule every second that slept a day fires only the latest)."""
        start = datetime.fromisoformat(self.last_slot or self.created_at)
        found: list[datetime] = []
        for slot in self.slots(start):
            if slot > now:
                break
            found.append(slot)
            if len(found) > 1000:
                del found[:-1000]
        return found

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        return cls(**json.loads(text))


def slot_run_id(schedule_id: str, slot: datetime) -> str:
    """The run a slot starts: the same for every server, so the second start finds the first."""
    return f"sched-{schedule_id}-{int(slot.timestamp())}"


def check(cron: str, timezone: str) -> None:
    """Raises `ConfigurationError` for a cron expression cronsim cannot read or an unknown zone."""
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigurationError(f"unknown time zone {timezone!r}; use an IANA name such as 'Europe/Paris'") from None
    with needs("schedules", "a schedule's cron expression"):
        from cronsim import CronSim, CronSimError
    try:
        CronSim(cron, datetime.now(zone))
    except (CronSimError, ValueError, LookupError) as exc:  # the last two: input cronsim did not foresee
        raise ConfigurationError(f"cron expression {cron!r} is not valid: {exc}") from None


class Schedules:
    """The schedules kept in a store: `add`, `list`, `pause`, `resume`, `remove`.

    `eudaimon serve` on that store fires them (for the agents it serves).
    """

    def __init__(self, store: EventStore) -> None:
        self._records: RecordStore = records_of(store, what="schedules")

    async def add(
        self,
        agent: str,
        cron: str,
        input: str,
        *,
        timezone: str = "UTC",
        thread_id: str | None = None,
        schedule_id: str | None = None,
    ) -> Schedule:
        """Keep a new schedule; its first slot is the first after now.

        Raises:
            ConfigurationError: a bad cron expression, time zone or id, or the id is taken.
        """
        check(cron, timezone)
        sid = schedule_id or secrets.token_hex(6)
        if not _ID.fullmatch(sid):
            raise ConfigurationError(f"schedule id {sid!r}: use 1 to 64 letters, digits, '_' or '-'")
        schedule = Schedule(
            id=sid,
            agent=agent,
            cron=cron,
            input=input,
            timezone=timezone,
            thread_id=thread_id,
            created_at=datetime.now(UTC).isoformat(),
        )
        if not await self._records.put_record(KIND, sid, schedule.to_json(), only_new=True):
            raise ConfigurationError(f"schedule id {sid!r} is taken")
        return schedule

    async def list(self) -> list[Schedule]:
        return [Schedule.from_json(r.body) for r in await self._records.load_records(KIND)]

    async def get(self, schedule_id: str) -> Schedule:
        record = await self._records.load_record(KIND, schedule_id)
        if record is None:
            raise UnknownSchedule(schedule_id)
        return Schedule.from_json(record.body)

    async def pause(self, schedule_id: str, paused: bool = True) -> Schedule:
        """Stop (or, with `paused=False`, restart) firing; slots passed while paused never fire."""
        while True:
            record = await self._records.load_record(KIND, schedule_id)
            if record is None:
                raise UnknownSchedule(schedule_id)
            schedule = Schedule.from_json(record.body)
            changed = replace(schedule, paused=paused)
            if not paused and schedule.paused:
                changed = replace(changed, last_slot=datetime.now(UTC).isoformat())
            if await self._records.put_record(KIND, schedule_id, changed.to_json(), expected=record.body):
                return changed

    async def resume(self, schedule_id: str) -> Schedule:
        return await self.pause(schedule_id, paused=False)

    async def remove(self, schedule_id: str) -> None:
        if not await self._records.delete_record(KIND, schedule_id):
            raise UnknownSchedule(schedule_id)

    async def fired(self, schedule: Schedule, slot: datetime, run_id: str | None) -> None:
        """Note `slot` as the schedule's last: never moving it back, not reviving a schedule removed
        meanwhile, and not undoing a pause made meanwhile (a compare-and-set on the record)."""
        while True:
            current = await self._records.load_record(KIND, schedule.id)
            if current is None:
                return
            kept = Schedule.from_json(current.body)
            if kept.last_slot is not None and datetime.fromisoformat(kept.last_slot) >= slot:
                return
            changed = replace(kept, last_slot=slot.isoformat(), last_run_id=run_id or kept.last_run_id)
            if await self._records.put_record(KIND, schedule.id, changed.to_json(), expected=current.body):
                return
