"""Schedules: an agent started with a given input at the slots of a cron expression.

A schedule is a record in the store (`stores.records`, kind `schedule`), so every server on
one store sees the same schedules and a restart loses none. A server fires a slot by starting
the run whose id the schedule and the slot name (`slot_run_id`): a second server firing the
same slot finds the run journaled and starts nothing, so each slot runs once whichever servers
are up (`server.scheduling`). Cron expressions are read by `cronsim` (extra `schedules`): five
fields, or six with seconds first; slots are reckoned in the schedule's time zone (IANA name),
so "0 9 * * 1-5" means nine on weekday mornings there, across daylight-saving changes.

A schedule of an agent served by a Temporal fleet is owned by Temporal (`engine` names the
fleet's engine URL): `add` also creates a Temporal Schedule, `pause` and `remove` are mirrored
on it, its next and last action times are Temporal's (`times`), and `eudaimon serve` leaves it
alone; Temporal fires it (`eudaimon.temporal._scheduled`), with the same run id per slot. The
runtime reaches Temporal only through the engine the URL opens (`ScheduleOwner`).

The record and the engine's schedule are two places, so each change is ordered to leave them
agreeing when the engine fails: `add` keeps the record, then creates the engine's schedule, and
deletes the record if that fails; `pause` and `remove` change the engine first and the record
after, so an engine that does not answer (or no longer has the schedule) changes nothing and
says what to do (`ScheduleEngineFailed`); a record that cannot be written after the engine
changed has the engine's change undone where it can be.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
from collections.abc import Awaitable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from eudaimon._extras import needs
from eudaimon.core.errors import ConfigurationError, EudaimonError
from eudaimon.runtime.process.engines import open_engine
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore, records_of

KIND = "schedule"
LATE_AFTER_S = 60.0
"""A slot found this long after its time was missed (no server, or Temporal, was up to fire it):
`catch_up` decides whether it still runs."""
CATCH_UPS = ("latest", "none")
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class UnknownSchedule(EudaimonError, KeyError):
    """No schedule has this id (it was never added, or was removed)."""


@runtime_checkable
class ScheduleOwner(Protocol):
    """An engine that fires schedules itself (Temporal Schedules), mirrored from the store's
    records by `Schedules` below: each slot starts the run `slot_run_id` names."""

    async def add_schedule(self, schedule: Schedule) -> None:
        """Create the engine's schedule for `schedule` (kept in the store already)."""
        ...

    async def pause_schedule(self, schedule_id: str, paused: bool) -> None: ...

    async def remove_schedule(self, schedule_id: str) -> None:
        """Delete the engine's schedule; one already gone is no error."""
        ...

    async def schedule_times(self, schedule_id: str) -> tuple[datetime | None, datetime | None]:
        """The engine's next action time and the scheduled time of its last action."""
        ...


class ScheduleEngineFailed(EudaimonError):
    """The engine that fires a schedule (Temporal) did not take a change; the store's record was
    left as it was, so the two still agree. The message says what to do."""


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
    engine: str = ""
    """Who fires it: "" for `eudaimon serve`; an engine URL (`temporal://host:port/queue`) for a
    Temporal Schedule that engine owns (its id `temporal_schedule_id`)."""
    catch_up: str = "latest"
    """For an engine's schedule, its missed slots: "latest" runs the latest once, "none" skips them
    (a server's are its `--catch-up`)."""

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

    def skips(self, slot: datetime, now: datetime) -> bool:
        """Whether a slot found at `now` is skipped as missed: it is over `LATE_AFTER_S` late and
        its catch-up is "none", or a later slot is due too (which runs instead, with "latest")."""
        if (now - slot).total_seconds() <= LATE_AFTER_S:
            return False
        return self.catch_up == "none" or self.next_slot(slot) <= now


def slot_run_id(schedule_id: str, slot: datetime) -> str:
    """The run a slot starts: the same for every server, so the second start finds the first."""
    return f"sched-{schedule_id}-{int(slot.timestamp())}"


def temporal_schedule_id(schedule_id: str) -> str:
    """The id of the Temporal Schedule that fires an engine-owned schedule."""
    return f"eudaimon-sched-{schedule_id}"


def owner_of(engine: str) -> ScheduleOwner:
    """The engine an engine URL opens, as the owner of schedules; `ConfigurationError` if it cannot own one."""
    opened = open_engine(engine)
    if not isinstance(opened, ScheduleOwner):
        raise ConfigurationError(f"the engine {engine!r} cannot fire schedules; leave it out for `eudaimon serve` to")
    return opened


async def _on_engine(schedule: Schedule, verb: str, change: Awaitable[None]) -> None:
    """Await the engine's side of a change; any failure becomes `ScheduleEngineFailed`, saying
    that the record was left as it was and what to do."""
    try:
        await change
    except EudaimonError:
        raise
    except Exception as exc:
        state = "paused" if schedule.paused else "active"
        raise ScheduleEngineFailed(
            f"schedule {schedule.id!r} was not {verb}d: {_engine_said(exc)} from {schedule.engine}; nothing was "
            f"changed (it is still {state}, in the store and on Temporal). Try again once Temporal answers; if "
            f"Temporal no longer has {temporal_schedule_id(schedule.id)!r}, `eudaimon schedules remove {schedule.id}` "
            "and add it again."
        ) from exc


def _engine_said(exc: BaseException) -> str:
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {said}"[:300] if said else type(exc).__name__


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
        engine: str | None = None,
        catch_up: str = "latest",
    ) -> Schedule:
        """Keep a new schedule; its first slot is the first after now. With `engine` (the URL of
        the agent's `TemporalEngine`), a Temporal Schedule of the same slots is created too, and
        Temporal fires it; `catch_up` is then its policy for missed slots.

        Raises:
            ConfigurationError: a bad cron expression, time zone, id or catch-up, the id is taken,
                or the engine could not create its schedule (nothing is kept then).
        """
        check(cron, timezone)
        if catch_up not in CATCH_UPS:
            raise ConfigurationError(f"catch_up is 'latest' or 'none', got {catch_up!r}")
        owner = owner_of(engine) if engine else None
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
            engine=engine or "",
            catch_up=catch_up,
        )
        if not await self._records.put_record(KIND, sid, schedule.to_json(), only_new=True):
            raise ConfigurationError(f"schedule id {sid!r} is taken")
        if owner is not None:
            try:  # the record first: what the engine fires reads it
                await owner.add_schedule(schedule)
            except BaseException as exc:
                await self._records.delete_record(KIND, sid)
                if isinstance(exc, Exception) and not isinstance(exc, EudaimonError):
                    raise ScheduleEngineFailed(
                        f"schedule {sid!r} was not added: {_engine_said(exc)} from {schedule.engine}; nothing was kept. "
                        "Add it again once Temporal answers (`temporal operator cluster health` checks it)."
                    ) from exc
                raise
        return schedule

    async def list(self) -> list[Schedule]:
        return [Schedule.from_json(r.body) for r in await self._records.load_records(KIND)]

    async def get(self, schedule_id: str) -> Schedule:
        record = await self._records.load_record(KIND, schedule_id)
        if record is None:
            raise UnknownSchedule(schedule_id)
        return Schedule.from_json(record.body)

    async def pause(self, schedule_id: str, paused: bool = True) -> Schedule:
        """Stop (or, with `paused=False`, restart) firing; slots passed while paused never fire.

        An engine's schedule is changed on the engine first, then in the record (pausing again
        what is paused already is no error, and brings the two back together).

        Raises:
            UnknownSchedule: no such schedule.
            ScheduleEngineFailed: the engine did not take the change; the record is unchanged.
        """
        verb = "pause" if paused else "resume"
        while True:
            record = await self._records.load_record(KIND, schedule_id)
            if record is None:
                raise UnknownSchedule(schedule_id)
            schedule = Schedule.from_json(record.body)
            changed = replace(schedule, paused=paused)
            if not paused and schedule.paused:
                changed = replace(changed, last_slot=datetime.now(UTC).isoformat())
            if schedule.engine:
                owner = owner_of(schedule.engine)
                await _on_engine(schedule, verb, owner.pause_schedule(schedule.id, paused))
                try:
                    written = await self._records.put_record(KIND, schedule_id, changed.to_json(), expected=record.body)
                except BaseException:
                    with contextlib.suppress(Exception):  # the record could not follow: undo the engine's change
                        await owner.pause_schedule(schedule.id, schedule.paused)
                    raise
            else:
                written = await self._records.put_record(KIND, schedule_id, changed.to_json(), expected=record.body)
            if written:
                return changed

    async def resume(self, schedule_id: str) -> Schedule:
        return await self.pause(schedule_id, paused=False)

    async def remove(self, schedule_id: str) -> None:
        """Remove the schedule (and its engine's schedule: it fires no more); its runs stay."""
        record = await self._records.load_record(KIND, schedule_id)
        if record is None:
            raise UnknownSchedule(schedule_id)
        schedule = Schedule.from_json(record.body)
        if schedule.engine:  # the engine first: a record left behind is seen, a Temporal Schedule left behind fires
            await _on_engine(schedule, "remove", owner_of(schedule.engine).remove_schedule(schedule.id))
        if not await self._records.delete_record(KIND, schedule_id):
            raise UnknownSchedule(schedule_id)

    async def times(self, schedule: Schedule, now: datetime) -> tuple[datetime | None, datetime | None]:
        """The schedule's next slot and the last one fired: its engine's own action times for an
        engine's schedule (None where it has none), else reckoned from the cron and the record."""
        if schedule.engine:
            return await owner_of(schedule.engine).schedule_times(schedule.id)
        upcoming = None if schedule.paused else schedule.next_slot(now)
        return upcoming, datetime.fromisoformat(schedule.last_slot) if schedule.last_slot else None

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
