"""The `eudaimon` command: run agents, play the offline demo, and read any journal.

Every command that reads runs takes `--store URL` (`sqlite:///runs.db`, `postgresql://…`,
`memory:`); without it, `$EUDAIMON_STORE`; without that, the SQLite file `runs.db` in the
user's data directory, which is also where `eudaimon demo` and `eudaimon run` journal.
Errors a user can fix (an unknown run, a corrupt row, a bad URL) print one message and exit 1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from eudaimon._extras import needs
from eudaimon.cli import _cancel, _effects, _mcp, _ops, _replay, _run, _schedules, _serve, _threads
from eudaimon.cli import _worker as _temporal_cli
from eudaimon.cli._common import (
    JsonOption,
    RunArgument,
    StoreOption,
    counted,
    default_store_url,
    exit_for,
    fail,
    load_events,
    out,
    read_state,
    resolve_store_url,
    run_async,
    shown_url,
    with_store,
)
from eudaimon.cli._escape import json_visible, shown
from eudaimon.cli._render import (
    early_stops,
    edited_calls,
    messages_table,
    overview,
    print_listing,
    state_to_dict,
    state_view,
    status_text,
    timeline_table,
)
from eudaimon.cli._tree import TreeView, load_tree, parent_line, render_tree
from eudaimon.core.codec import event_to_json
from eudaimon.core.errors import EudaimonError
from eudaimon.core.events import Event
from eudaimon.core.run_index import NOT_ENDED, STATUSES, RunRow
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process.drivers import driverless_runs, run_drivers
from eudaimon.stores import index
from eudaimon.stores.base import EventStore, Lease

if TYPE_CHECKING:  # `eudaimon --help` does not load the agent surface; commands import what they run
    pass

app = typer.Typer(
    name="eudaimon",
    help="Durable AI agents: run them, replay the demo, and inspect any run's journal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
runs_app = typer.Typer(
    help="Inspect the runs in a journal, and decide for the ones that wait.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(runs_app, name="runs")
_ops.register(runs_app)
_cancel.register(runs_app)
_effects.register(runs_app)
_threads.register(app)
_schedules.register(app)
_serve.register(app)
_mcp.register(app)
_replay.register(app)
_temporal_cli.register(app)


# -- runs ----------------------------------------------------------------------------------


_FOLD_STATUSES = frozenset(status.value for status in Status)
"""The statuses `status_text` styles; the index may hold others (`queued`)."""


@runs_app.command("list")
def runs_list(
    store: StoreOption = None,
    limit: Annotated[int, typer.Option(help="Show at most this many runs, newest first.")] = 20,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            help=f"Only runs in this status; give it again for any of several. One of: {', '.join(STATUSES)}.",
        ),
    ] = None,
    agent: Annotated[str | None, typer.Option(help="Only the runs of this agent.")] = None,
    search: Annotated[
        str | None,
        typer.Option(help="Only runs whose input, output, tool names, run, thread or call ids hold this text."),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only runs created at or after this ISO 8601 date or datetime.")
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(help="Only runs created before this ISO 8601 datetime, or on or before this date."),
    ] = None,
    thread: Annotated[str | None, typer.Option(help="Only the runs of this thread.")] = None,
    replay_of: Annotated[str | None, typer.Option(help="Only the replays of this run (`eudaimon replay`).")] = None,
    replays: Annotated[bool, typer.Option("--replays", help="Include replays, which are left out.")] = False,
    version: Annotated[str | None, typer.Option(help="Only the runs of this agent version.")] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Ask Temporal about the listed runs it drives that the journal says have not ended "
            "(running, or waiting for a person or a time): one whose workflow was terminated, timed out "
            "or failed outside the loop is journaled as failed.",
        ),
    ] = False,
) -> None:
    """List runs, most recently updated first (replays only when asked for); the filters combine.

    A run in the thread of its own (started over HTTP without one, named AGENT:RUN_ID) shows
    `own` as its thread. The runs that wait for a person:
    `eudaimon runs list --status awaiting_approval --status awaiting_reconciliation`.
    """
    url = resolve_store_url(store)
    unknown = [name for name in status or () if name not in STATUSES]
    if unknown:
        fail(f"--status {unknown[0]!r} is no run status; pass one of: {', '.join(STATUSES)}")
    if limit < 1:
        fail(f"--limit {limit}: show at least one run")
    try:
        created = (index.filter_bound("--since", since, end=False), index.filter_bound("--until", until, end=True))
    except index.BadBound as exc:
        fail(str(exc))
    query = index.RunQuery(
        limit=limit,
        statuses=tuple(dict.fromkeys(status or ())),
        agent=agent,
        q=search or None,
        since=created[0],
        until=created[1],
        thread_id=thread,
        replay_of=replay_of,
        replays=replays,
        version=version,
    )

    async def work(journal: EventStore) -> tuple[list[RunRow], frozenset[str]]:
        rows = await index.query_runs(journal, query)
        return rows, await driverless_runs(journal, rows)

    async def checked(journal: EventStore) -> tuple[list[RunRow], frozenset[str]]:
        rows = await index.query_runs(journal, query)
        going = [row.run_id for row in rows if row.status in NOT_ENDED]
        if going:
            with needs("temporal", "eudaimon runs list --check"):
                from eudaimon.temporal._check_runs import check_runs
            for run_id in await check_runs(journal, going):
                out().print(shown(f"run {run_id}: its Temporal workflow had closed; journaled as failed", "yellow"))
        return await work(journal)

    rows, driverless = (
        run_async(with_store(url, checked, read_only=False))
        if check
        else run_async(with_store(url, work, read_only=True))
    )
    console = out()
    if not rows:
        filtered = query != index.RunQuery(limit=limit, replays=replays)
        said = "No run matches those filters in" if filtered else "No runs in"
        console.print(shown(f"{said} {shown_url(url)}." + ("" if filtered else " Try `eudaimon demo`.")))
        return
    table = Table(title=shown(f"Runs in {shown_url(url)}", newlines=False), title_justify="left")
    threads = any(row.thread_id for row in rows)
    table.add_column("run", no_wrap=True, min_width=max(len(row.run_id) for row in rows))
    table.add_column("agent", min_width=5)
    table.add_column("status", no_wrap=True)
    if threads:
        table.add_column("thread", overflow="fold")  # an id to copy: folded onto a second line, never cut
    table.add_column("steps", justify="right", no_wrap=True)
    table.add_column("events", justify="right", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    for row in rows:  # from the store's run index: no run is folded to list it
        in_thread = Text("own", style="dim") if row.in_own_thread else shown(row.thread_id or "-", newlines=False)
        thread_cell = [in_thread] if threads else []
        table.add_row(
            shown(row.run_id, newlines=False),
            shown(row.agent, newlines=False),
            _status_cell(row, driverless),
            *thread_cell,
            str(row.steps),
            str(row.event_count),
            row.updated_at.astimezone().strftime("%m-%d %H:%M"),
        )
    print_listing(console, table)
    if driverless:
        console.print(
            shown(
                "no driver: no process holds the run's lease now (the one that drove it ended or stalled); a server "
                "serving the run's agent on this store takes it over, or `eudaimon runs resume RUN_ID --agent MODULE:ATTR`",
                "yellow",
            )
        )


def _status_cell(row: RunRow, driverless: frozenset[str]) -> Text:
    cell = status_text(row.status) if row.status in _FOLD_STATUSES else Text(row.status)
    if row.run_id in driverless:
        cell.append(", no driver", style="yellow")
    return cell


@runs_app.command("show")
def runs_show(run_id: RunArgument, store: StoreOption = None) -> None:
    """Show a run: status, agent, thread, steps, usage, cost and its messages."""
    url = resolve_store_url(store)

    async def read(
        journal: EventStore,
    ) -> tuple[RunState, TreeView, str | None, list[str], list[str], dict[str, Lease] | None, bool | str | None]:
        state = await read_state(journal, run_id)
        events = await load_events(journal, run_id)
        stops = early_stops(events)
        tree, parent = await load_tree(journal, state), await parent_line(journal, state)
        going = state.status is Status.RUNNING and not state.engine
        drivers = await run_drivers(journal, [run_id] if going else [])
        engine = await _ops.engine_drives(state) if state.engine and state.status is Status.RUNNING else None
        return state, tree, parent, stops, edited_calls(events), drivers, engine

    state, tree, parent, stops, edits, drivers, engine = run_async(with_store(url, read, read_only=True))
    console = out()
    console.print(overview(state, state.next_seq))
    for stop in stops:  # an answer cut by max_tokens must not look finished
        console.print(shown(stop, "yellow", newlines=False))
    if parent is not None:
        console.print(parent)
    if tree.has_children:
        console.print(Text("runs", style="bold"))
        console.print(render_tree(tree))
    console.print(messages_table(state.messages))
    for line in edits:
        console.print(shown(line, "yellow"))
    _ops.print_waiting(state, url, tree)
    _ops.print_running(state, url, drivers, engine)


@runs_app.command("events")
def runs_events(run_id: RunArgument, store: StoreOption = None, as_json: JsonOption = False) -> None:
    """Show a run's journal as a timeline; `--json` prints the raw event rows, one per line."""
    url = resolve_store_url(store)
    events = run_async(with_store(url, lambda journal: load_events(journal, run_id), read_only=True))
    if as_json:
        for event in events:
            typer.echo(json_visible(event_to_json(event)))
        return
    out().print(timeline_table(events, title=f"Journal of {run_id} ({counted(len(events), 'event')})"))


@runs_app.command("state")
def runs_state(
    run_id: RunArgument,
    store: StoreOption = None,
    at: Annotated[int | None, typer.Option("--at", help="Fold the journal up to and including this seq.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The run's state folded from its journal, after event `--at SEQ` (default: the last)."""

    async def work(journal: EventStore) -> tuple[list[Event], RunState]:
        events = await load_events(journal, run_id)
        if at is not None and not 0 <= at < len(events):
            fail(f"run {run_id} has events 0..{len(events) - 1}; --at {at} is outside them")
        return events, await read_state(journal, run_id, at)  # the path `agent.state()` takes

    events, state = run_async(with_store(resolve_store_url(store), work, read_only=True))
    prefix = events if at is None else events[: at + 1]
    if as_json:
        typer.echo(json_visible(json.dumps(state_to_dict(state), ensure_ascii=False, indent=2)))
        return
    out().print(state_view(state, prefix[-1]))


# -- running agents ------------------------------------------------------------------------


@app.command()
def demo(
    store: StoreOption = None,
    pace: Annotated[float, typer.Option(help="Seconds between streamed words; 0 for no pause.")] = 0.03,
    approve: Annotated[
        bool, typer.Option("--approve", help="Approve the refund without asking (for scripts).")
    ] = False,
    deny: Annotated[bool, typer.Option("--deny", help="Deny the refund without asking (for scripts).")] = False,
) -> None:
    """The offline refund-desk demo: a worker killed mid-tool, a resume, an approval, the journal.

    A scripted model, real worker processes and a real journal (SQLite by default). On a
    terminal it asks whether to approve the refund; elsewhere pass --approve or --deny.
    """
    from eudaimon.cli.demo._run import play

    if approve and deny:
        fail("--approve and --deny exclude each other; pass one of them")
    url = resolve_store_url(store)
    try:
        status = play(url, pace, True if approve else False if deny else None, out())
    except EudaimonError as exc:
        fail(str(exc))
    exit_for(status)


_run.register(app)


def main() -> None:  # pragma: no cover - the console script calls `app`
    app()


__all__ = ["app", "default_store_url", "main", "resolve_store_url"]
