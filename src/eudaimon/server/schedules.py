"""`/v1/schedules`: add, list, pause, resume and remove schedules (operators only).

A schedule starts runs of an agent on its own, so reading the list is an operator's too: its
inputs are prompts an operator wrote. Next and last runs are shown as the store and the cron
expression have them (`runtime.schedules`).
"""

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from eudaimon.core.errors import ConfigurationError, MissingExtra
from eudaimon.runtime.schedules import Schedule, Schedules, UnknownSchedule
from eudaimon.server.context import Ctx, Operator, ServerContext
from eudaimon.server.responses import ERRORS


class NewSchedule(BaseModel):
    agent: str = Field(description="The agent to start, by name; this server must serve it.")
    cron: str = Field(description="Five fields (minute first), or six with seconds first.", max_length=200)
    input: str = Field(max_length=100_000)
    timezone: str = Field("UTC", description="The IANA time zone the cron expression is read in.", max_length=64)
    thread_id: str | None = Field(None, max_length=128)
    schedule_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")


class PauseSchedule(BaseModel):
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


class ScheduleList(BaseModel):
    schedules: list[ScheduleView]


def view(schedule: Schedule, now: datetime | None = None) -> dict[str, Any]:
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
        "next_run_at": upcoming,
    }


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
    return {"schedules": [view(s) for s in await kept(ctx).list()]}


@router.post("", summary="Add a schedule", status_code=201, response_model=ScheduleView)
async def add_schedule(ctx: Ctx, body: NewSchedule, principal: Operator) -> dict[str, Any]:
    """Keep a schedule; a server serving its agent fires it from the next slot on."""
    if body.agent not in ctx.agents:
        raise HTTPException(422, f"this server serves no agent {body.agent!r}")
    try:
        schedule = await kept(ctx).add(
            body.agent,
            body.cron,
            body.input,
            timezone=body.timezone,
            thread_id=body.thread_id,
            schedule_id=body.schedule_id,
        )
    except (ConfigurationError, MissingExtra) as exc:
        raise HTTPException(422, str(exc)) from None
    return view(schedule)


@router.post("/{schedule_id}/pause", summary="Pause or resume a schedule", response_model=ScheduleView)
async def pause_schedule(ctx: Ctx, schedule_id: str, body: PauseSchedule, principal: Operator) -> dict[str, Any]:
    """`{"paused": false}` resumes it; slots passed while paused never fire."""
    try:
        return view(await kept(ctx).pause(schedule_id, body.paused))
    except UnknownSchedule:
        raise HTTPException(404, f"no schedule {schedule_id!r}") from None


@router.delete("/{schedule_id}", summary="Remove a schedule", status_code=204)
async def remove_schedule(ctx: Ctx, schedule_id: str, principal: Operator) -> None:
    """Runs it started stay; no more are started."""
    try:
        await kept(ctx).remove(schedule_id)
    except UnknownSchedule:
        raise HTTPException(404, f"no schedule {schedule_id!r}") from None
