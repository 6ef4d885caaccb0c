"""`/v1/schedules`: add, list, pause, resume and remove schedules (operators only).

A schedule starts runs of an agent on its own, so reading the list is an operator's too: its
inputs are prompts an operator wrote. Next and last runs are shown as the store and the cron
expression have them (`runtime.process.schedules`). A schedule of an agent this server serves on a
Temporal fleet (its `TemporalEngine`) is added as a Temporal Schedule: Temporal fires it, and
no server does; its next and last action times are then Temporal's own (`Schedules.times`, as
`eudaimon schedules list` shows them), and a Temporal that does not answer is said so in the
view (`engine_error`) rather than failing the whole list.
"""

import asyncio
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.errors import ConfigurationError, MissingExtra
from eudaimon.runtime.process.schedules import Schedule, ScheduleEngineFailed, ScheduleOwner, Schedules, UnknownSchedule
from eudaimon.server.context import Ctx, Operator, ServerContext
from eudaimon.server.responses import ERRORS, Problem
from eudaimon.server.schemas import RequestBody


class NewSchedule(RequestBody):
    agent: str = Field(description="The agent to start, by name; this server must serve it.")
    cron: str = Field(description="Five fields (minute first), or six with seconds first.", max_length=200)
    input: str = Field(max_length=100_000)
    timezone: str = Field("UTC", description="The IANA time zone the cron expression is read in.", max_length=64)
    thread_id: str | None = Field(None, max_length=128)
    schedule_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")


class PauseSchedule(RequestBody):
    paused: bool = True


class ScheduleView(BaseModel):
    id: str
    agent: str
    cron: str
    input: str
    timezone: str
    thread_id: str | None
    paused: bool
    created_at: str
    last_slot: str | None = Field(description="The last slot fired (or skipped as missed).")
    last_run_id: str | None
    next_run_at: str | None = Field(description="The next slot, unless paused.")
    engine: str = Field("", description="The engine that fires it (a Temporal URL), or empty: `eudaimon serve`.")
    times_from: str = Field(
        "cron",
        description="Where next_run_at comes from: 'cron' (reckoned by eudaimon), 'engine' (Temporal's next "
        "action time), or 'unavailable' (the engine did not answer: engine_error says why).",
    )
    engine_last_at: str | None = Field(None, description="For an engine's schedule: its last action's scheduled time.")
    engine_error: str | None = Field(None, description="Why the engine's times could not be read.")


class ScheduleList(BaseModel):
    schedules: list[ScheduleView]


ENGINE_WAIT_S = 5.0
"""How long the view waits for an engine's times before saying it did not answer."""


async def shown(kept: Schedules, schedule: Schedule, now: datetime | None = None) -> dict[str, Any]:
    """`view`, with an engine's schedule's next and last action times asked of the engine."""
    now = now or datetime.now(UTC)
    if not schedule.engine:
        return view(schedule, now)
    try:
        upcoming, last = await asyncio.wait_for(kept.times(schedule, now), ENGINE_WAIT_S)
    except Exception as exc:  # any failure to reach it (refused, unreachable, timed out) is shown, not raised
        said = str(exc) or type(exc).__name__
        return {**view(schedule, now), "next_run_at": None, "times_from": "unavailable", "engine_error": said}
    return {
        **view(schedule, now),
        "next_run_at": upcoming.isoformat() if upcoming else None,
        "times_from": "engine",
        "engine_last_at": last.isoformat() if last else None,
    }


def view(schedule: Schedule, now: datetime | None = None) -> dict[str, Any]:
    """The schedule with its next slot reckoned from the cron (`shown` asks an engine instead)."""
    now = now or datetime.now(UTC)
    after = max(now, datetime.fromisoformat(schedule.last_slot)) if schedule.last_slot else now
    upcoming = None if schedule.paused else schedule.next_slot(after).isoformat()
    return {
        "id": schedule.id,
        "agent": schedule.agent,
        "cron": schedule.cron,
        "input": schedule.input,
        "timezone": schedule.timezone,
        "thread_id": schedule.thread_id,
        "paused": schedule.paused,
        "created_at": schedule.created_at,
        "last_slot": schedule.last_slot,
        "last_run_id": schedule.last_run_id,
        "engine": schedule.engine,
        "next_run_at": upcoming,
    }


ENGINE_FAILED: dict[int | str, dict[str, Any]] = {
    503: {"model": Problem, "description": "The engine that fires the schedule (Temporal) did not take the change; "
          "nothing was changed."}
}  # fmt: skip


router = APIRouter(prefix="/v1/schedules", tags=["schedules"], responses=ERRORS)


def kept(ctx: ServerContext) -> Schedules:
    """The store's schedules; 409 when the store keeps none."""
    try:
        return Schedules(ctx.store)
    except ConfigurationError as exc:
        raise HTTPException(409, str(exc)) from None


@router.get("", summary="List schedules", response_model=ScheduleList)
async def list_schedules(ctx: Ctx, principal: Operator) -> dict[str, Any]:
    """Every schedule in the store, by id, with its next and last runs."""
    schedules = kept(ctx)
    now = datetime.now(UTC)
    listed = await schedules.list()
    return {"schedules": list(await asyncio.gather(*(shown(schedules, s, now) for s in listed)))}


@router.post("", summary="Add a schedule", status_code=201, response_model=ScheduleView, responses=ENGINE_FAILED)
async def add_schedule(ctx: Ctx, body: NewSchedule, principal: Operator) -> dict[str, Any]:
    """Keep a schedule; a server serving its agent fires it from the next slot on."""
    if body.agent not in ctx.agents:
        raise HTTPException(422, f"this server serves no agent {body.agent!r}")
    engine = runtime_of(ctx.agents[body.agent]).engine
    schedules = kept(ctx)
    try:
        schedule = await schedules.add(
            body.agent,
            body.cron,
            body.input,
            timezone=body.timezone,
            thread_id=body.thread_id,
            schedule_id=body.schedule_id,
            engine=engine.url if isinstance(engine, ScheduleOwner) else None,
        )
    except (ConfigurationError, MissingExtra) as exc:
        raise HTTPException(422, str(exc)) from None
    except ScheduleEngineFailed as exc:
        raise HTTPException(503, str(exc)) from None
    return await shown(schedules, schedule)


@router.post(
    "/{schedule_id}/pause", summary="Pause or resume a schedule", response_model=ScheduleView, responses=ENGINE_FAILED
)
async def pause_schedule(ctx: Ctx, schedule_id: str, body: PauseSchedule, principal: Operator) -> dict[str, Any]:
    """`{"paused": false}` resumes it; slots passed while paused never fire."""
    schedules = kept(ctx)
    try:
        return await shown(schedules, await schedules.pause(schedule_id, body.paused))
    except UnknownSchedule:
        raise HTTPException(404, f"no schedule {schedule_id!r}") from None
    except ScheduleEngineFailed as exc:
        raise HTTPException(503, str(exc)) from None


@router.delete("/{schedule_id}", summary="Remove a schedule", status_code=204, responses=ENGINE_FAILED)
async def remove_schedule(ctx: Ctx, schedule_id: str, principal: Operator) -> None:
    """Runs it started stay; no more are started."""
    try:
        await kept(ctx).remove(schedule_id)
    except UnknownSchedule:
        raise HTTPException(404, f"no schedule {schedule_id!r}") from None
    except ScheduleEngineFailed as exc:
        raise HTTPException(503, str(exc)) from None
