"""`eudaimon schedules add|list|pause|remove`: the schedules kept in a store (`runtime.process.schedules`).

`eudaimon serve` on the same store fires them for the agents it serves; a schedule added with
`--temporal URL` (the agent's `TemporalEngine`) is a Temporal Schedule too, and Temporal fires it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated
from zoneinfo import ZoneInfo

import typer
from rich.table import Table
from rich.text import Text

from eudaimon.cli._common import StoreOption, fail, out, resolve_store_url, run_async, shown_url, with_store
from eudaimon.cli._escape import shown
from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.process.schedules import Schedule, ScheduleEngineFailed, Schedules, UnknownSchedule
from eudaimon.stores.base import EventStore

IdArgument = Annotated[str, typer.Argument(help="The schedule's id (see `eudaimon schedules list`).")]


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Start agents on a cron schedule (fired by `eudaimon serve`).",
        no_args_is_help=True,
        rich_markup_mode="markdown",
    )
    group.command("add")(schedules_add)
    group.command("list")(schedules_list)
    group.command("pause")(schedules_pause)
    group.command("remove")(schedules_remove)
    app.add_typer(group, name="schedules")


def schedules_add(
    agent: Annotated[str, typer.Argument(help="The agent's name, as `eudaimon serve` serves it.")],
    cron: Annotated[
        str,
        typer.Option(
            "--cron",
            help='Cron expression: five fields (minute hour day month weekday), e.g. "0 9 * * 1-5", '
            "or six with seconds first.",
        ),
    ],
    input: Annotated[str, typer.Option("--input", help="The input each run starts with.")],
    timezone: Annotated[str, typer.Option("--timezone", help="IANA time zone the expression is read in.")] = "UTC",
    thread: Annotated[str | None, typer.Option("--thread", help="Run every slot on this thread.")] = None,
    schedule_id: Annotated[str | None, typer.Option("--id", help="The schedule's id (default: a fresh one).")] = None,
    temporal: Annotated[
        str | None,
        typer.Option(
            "--temporal",
            help="The agent's Temporal engine, temporal://HOST:PORT/QUEUE[?namespace=N]: a Temporal Schedule fires it.",
        ),
    ] = None,
    catch_up: Annotated[
        str, typer.Option("--catch-up", help="With --temporal: slots missed while Temporal was down, latest or none.")
    ] = "latest",
    store: StoreOption = None,
) -> None:
    """Add a schedule; its first run is at the next slot."""
    url = resolve_store_url(store)
    if catch_up not in ("latest", "none"):
        fail("--catch-up is `latest` or `none`")
    if temporal is not None and not temporal.startswith("temporal://"):
        fail(f"--temporal is the agent's engine URL, temporal://HOST:PORT/QUEUE, got {temporal!r}")

    async def work(journal: EventStore) -> Schedule:
        try:
            return await Schedules(journal).add(
                agent,
                cron,
                input,
                timezone=timezone,
                thread_id=thread,
                schedule_id=schedule_id,
                engine=temporal,
                catch_up=catch_up,
            )
        except (ConfigurationError, ScheduleEngineFailed) as exc:
            fail(str(exc))

    schedule = run_async(with_store(url, work))
    upcoming = schedule.next_slot(datetime.now(UTC)).isoformat()
    out().print(shown(f"schedule {schedule.id}: {agent} at {cron!r} ({timezone}); next run {upcoming}"))


def schedules_list(
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per schedule.")] = False,
) -> None:
    """List the schedules with their next and last runs."""
    url = resolve_store_url(store)

    now = datetime.now(UTC)

    async def work(journal: EventStore) -> list[tuple[Schedule, str | None, str | None]]:
        kept = Schedules(journal)
        listed = []
        for s in await kept.list():
            upcoming, last = await kept.times(s, now)
            listed.append((s, upcoming.isoformat() if upcoming else None, last.isoformat() if last else None))
        return listed

    found = run_async(with_store(url, work))
    console = out()
    if as_json:
        for s, upcoming, last in found:
            print(json.dumps({**json.loads(s.to_json()), "next_run_at": upcoming, "last_slot_at": last}))
        return
    if not found:
        console.print(shown(f"No schedules in {shown_url(url)}."))
        return
    table = Table(
        title=shown(f"Schedules in {shown_url(url)}", newlines=False),
        title_justify="left",
        caption="Times are each schedule's own, in its zone.",
        caption_justify="left",
    )
    table.add_column("id, state", no_wrap=True)  # the id is copied whole into `schedules pause` and `remove`
    table.add_column("agent", overflow="fold")
    table.add_column("cron, zone", no_wrap=True)
    table.add_column("next run", no_wrap=True)
    table.add_column("last run", overflow="fold")
    for s, upcoming, last in found:
        last_run = Text(local_time(last, s.timezone))
        if s.last_run_id:
            last_run.append("\n").append(shown(s.last_run_id, newlines=False))
        state = ("paused" if s.paused else "active") + (", by Temporal" if s.engine else "")
        table.add_row(
            shown(s.id, newlines=False) + Text("\n" + state, style="yellow" if s.paused else "dim"),
            shown(s.agent, newlines=False),
            Text(s.cron + "\n") + Text(s.timezone, style="dim"),
            local_time(upcoming, s.timezone),
            last_run,
        )
    console.print(table)


def local_time(at: str | None, zone: str) -> str:
    """A slot as the schedule reckons it: in its own time zone, to the minute (seconds when set)."""
    if at is None:
        return "-"
    moment = datetime.fromisoformat(at).astimezone(ZoneInfo(zone))
    return moment.strftime("%Y-%m-%d %H:%M:%S" if moment.second else "%Y-%m-%d %H:%M")


def schedules_pause(
    schedule_id: IdArgument,
    resume: Annotated[bool, typer.Option("--resume", help="Resume it instead.")] = False,
    store: StoreOption = None,
) -> None:
    """Pause a schedule (slots passed while paused never run), or resume it."""
    url = resolve_store_url(store)

    async def work(journal: EventStore) -> Schedule:
        try:
            return await Schedules(journal).pause(schedule_id, not resume)
        except UnknownSchedule:
            fail(f"no schedule {schedule_id!r}; `eudaimon schedules list` shows them")
        except ScheduleEngineFailed as exc:
            fail(str(exc))

    schedule = run_async(with_store(url, work))
    out().print(shown(f"schedule {schedule.id} {'paused' if schedule.paused else 'resumed'}"))


def schedules_remove(schedule_id: IdArgument, store: StoreOption = None) -> None:
    """Remove a schedule; the runs it started stay."""
    url = resolve_store_url(store)

    async def work(journal: EventStore) -> None:
        try:
            await Schedules(journal).remove(schedule_id)
        except UnknownSchedule:
            fail(f"no schedule {schedule_id!r}; `eudaimon schedules list` shows them")
        except ScheduleEngineFailed as exc:
            fail(str(exc))

    run_async(with_store(url, work))
    out().print(shown(f"schedule {schedule_id} removed"))
