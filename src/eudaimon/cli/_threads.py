"""`eudaimon threads list|show`: conversations, read from the runs that make them up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from eudaimon.cli._common import StoreOption, fail, out, resolve_store_url, run_async, shown_url, with_store
from eudaimon.cli._escape import shown
from eudaimon.cli._render import cost_text
from eudaimon.stores.base import EventStore, RunSummary

if TYPE_CHECKING:
    from eudaimon.memory.thread import ThreadState

ThreadArgument = Annotated[str, typer.Argument(help="The thread id (see `eudaimon threads list`).")]
_ALL = 1_000_000_000


def register(app: typer.Typer) -> None:
    threads = typer.Typer(
        help="Inspect conversation threads: their runs and running totals.",
        no_args_is_help=True,
        rich_markup_mode="markdown",
    )
    threads.command("list")(threads_list)
    threads.command("show")(threads_show)
    app.add_typer(threads, name="threads")


def threads_list(
    store: StoreOption = None,
    limit: Annotated[int, typer.Option(help="Show at most this many threads, most recent first.")] = 20,
) -> None:
    """List threads, most recently active first, with how many runs each has."""
    url = resolve_store_url(store)

    async def work(journal: EventStore) -> dict[str, list[RunSummary]]:
        by_thread: dict[str, list[RunSummary]] = {}
        for summary in await journal.list_runs(limit=_ALL):
            if summary.thread_id is not None:
                by_thread.setdefault(summary.thread_id, []).append(summary)
        return by_thread

    by_thread = run_async(with_store(url, work, read_only=True))
    console = out()
    if not by_thread:
        console.print(shown(f"No threads in {shown_url(url)}."))
        return
    table = Table(title=shown(f"Threads in {shown_url(url)}", newlines=False), title_justify="left")
    for column in ("thread", "agent", "runs", "finished", "last active"):
        table.add_column(column, no_wrap=True, justify="right" if column in ("runs", "finished") else "left")
    for thread_id, runs in list(by_thread.items())[:limit]:
        latest = runs[0]  # list_runs is newest first
        finished = sum(1 for r in runs if r.is_finished)
        table.add_row(
            shown(thread_id, newlines=False),
            shown(latest.agent, newlines=False),
            str(len(runs)),
            str(finished),
            latest.updated_at.astimezone().strftime("%m-%d %H:%M"),
        )
    console.print(table)


def threads_show(thread_id: ThreadArgument, store: StoreOption = None) -> None:
    """Show a thread's snapshot (turns, usage, guardrail streak, cost) and its runs."""
    url = resolve_store_url(store)

    async def work(journal: EventStore) -> tuple[ThreadState, list[RunSummary]]:
        runs = await journal.list_runs(limit=_ALL, thread_id=thread_id)
        if not runs:
            fail(f"no thread {thread_id!r} in {shown_url(url)}; see `eudaimon threads list`")
        from eudaimon.runtime.process.threads import thread_state

        return await thread_state(journal, thread_id, cache=False), runs

    state, runs = run_async(with_store(url, work, read_only=True))
    console = out()
    usage = state.total_usage
    cost = cost_text(state.accumulated_cost_usd)
    console.print(
        Text("thread ", style="bold")
        + shown(f"{state.thread_id}  created {state.created_at.astimezone():%Y-%m-%d %H:%M}", newlines=False)
    )
    console.print(
        f"turns {state.turn_count}   tokens in {usage.input_tokens} / out {usage.output_tokens}"
        f" (cached {usage.cached_tokens})   cost {cost}   guardrail streak {state.guardrail_retries}"
    )
    table = Table(title="Runs, oldest first", title_justify="left")
    for column in ("run", "last event", "events", "updated"):
        table.add_column(column, no_wrap=True)
    for run in sorted(runs, key=lambda r: r.created_at):
        table.add_row(
            shown(run.run_id, newlines=False),
            shown(run.last_event_type, newlines=False),
            str(run.event_count),
            f"{run.updated_at.astimezone():%m-%d %H:%M}",
        )
    console.print(table)
