"""`eudaimon run MODULE:ATTR "prompt"`: one prompt streamed through an agent, in the foreground.

The run's id is drawn here and printed before the first model call, so a run whose process is
killed can still be found. Ctrl-C (SIGINT) or SIGTERM stops the process, not the run: its
journal keeps every step, and the command says how to go on (`runs resume`) or end it
(`runs cancel`). Exit 130 after SIGINT, 143 after SIGTERM, as a shell's own would be.
"""

import asyncio
import signal
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from eudaimon.agent import Agent
    from eudaimon.stores.base import EventStore

_EXIT_AFTER = {signal.SIGINT: 130, signal.SIGTERM: 143}


def register(app: typer.Typer) -> None:
    """Add `run` to the `eudaimon` command."""
    from eudaimon.cli import _ops
    from eudaimon.cli._common import (
        StoreOption,
        environ,
        exit_for,
        journal_url,
        load_agent,
        make_default_directory,
        out,
        resolve_store_url,
        run_async,
    )
    from eudaimon.runtime.loop.clock import new_run_id
    from eudaimon.stores.memory import MemoryStore

    @app.command("run")
    def run_agent(
        target: Annotated[str, typer.Argument(help="MODULE:ATTR naming an Agent, or a function returning one.")],
        input: Annotated[str, typer.Argument(help="The prompt.")],
        store: StoreOption = None,
        thread: Annotated[str | None, typer.Option(help="Thread id, so memory links this run to others.")] = None,
    ) -> None:
        """Import an Agent and stream one prompt through it.

        An agent built without a store journals to `--store` (default: as for `runs`). Ctrl-C
        stops this process, not the run: it says how to resume or cancel it.
        """
        url = resolve_store_url(store)
        make_default_directory(url)
        with environ("EUDAIMON_STORE", url):
            agent = load_agent(target)
        console = out()
        run_id = new_run_id()
        where = journal_url(agent.store, url)
        stopped_by: list[signal.Signals] = []

        async def work() -> str:
            loop = asyncio.get_running_loop()
            task = asyncio.current_task()
            assert task is not None

            def terminated() -> None:  # a service manager's stop is a Ctrl-C
                stopped_by.append(signal.SIGTERM)
                task.cancel()

            loop.add_signal_handler(signal.SIGTERM, terminated)
            try:
                console.print(Text(f"run {run_id}", style="dim"), soft_wrap=True)
                status = await _stream(agent, console, input, thread, run_id)
                _ops.print_waiting(await agent.state(run_id), where)
                _print_hint(console, run_id, where, isinstance(agent.store, MemoryStore))
                return status
            finally:
                loop.remove_signal_handler(signal.SIGTERM)
                await agent.store.close()

        try:
            exit_for(run_async(work()))
        except (KeyboardInterrupt, asyncio.CancelledError):
            stopped = stopped_by[0] if stopped_by else signal.SIGINT
            journaled = None if isinstance(agent.store, MemoryStore) else _journaled(where, run_id)
            _print_stopped(console, run_id, target, where, stopped, journaled)
            raise typer.Exit(_EXIT_AFTER[stopped]) from None


async def _stream(agent: "Agent", console: Console, text: str, thread: str | None, run_id: str) -> str:
    from eudaimon.cli._escape import shown
    from eudaimon.cli._render import StreamPrinter, status_text
    from eudaimon.core.errors import EudaimonError

    printer = StreamPrinter(console)
    async for event in agent.prompt_stream(text, thread_id=thread, run_id=run_id):
        printer.show(event)
    if printer.done is None:
        raise EudaimonError("the run's stream ended without Done")
    console.print(
        Text("run ", style="bold") + shown(printer.done.run_id) + Text(" ") + status_text(printer.done.status)
    )
    return printer.done.status


def _store_flag(url: str) -> str:
    from eudaimon.cli._common import default_store_url, shown_url

    return f" --store {shown_url(url)}" if url != default_store_url() else ""


def _print_hint(console: Console, run_id: str, url: str, in_memory: bool) -> None:
    from eudaimon.cli._escape import shown

    if in_memory:
        console.print(Text("The store is in memory: this journal is gone when the process exits.", style="yellow"))
        return
    console.print(Text("\nInspect it again with:", style="bold"))
    for command in (f"runs events {run_id}", f"runs show {run_id}", f"runs state {run_id} --at 2"):
        console.print(shown(f"  eudaimon {command}{_store_flag(url)}", "cyan"), soft_wrap=True)


def _journaled(url: str, run_id: str) -> bool:
    """Whether the run reached the journal (a stop can come before its first event)."""
    from eudaimon.cli._common import with_store

    async def read(store: "EventStore") -> bool:
        return bool(await store.load(run_id))

    try:
        return asyncio.run(with_store(url, read, read_only=True))
    except Exception:  # the store cannot be read now: print the commands, which will say
        return True


def _print_stopped(
    console: Console, run_id: str, target: str, url: str, stopped: signal.Signals, journaled: bool | None
) -> None:
    """What a stopped `eudaimon run` leaves: the run where its journal ends, and how to go on
    (`journaled` None: the store was in memory, and went with the process)."""
    from eudaimon.cli._escape import shown

    console.print()
    if journaled is None:
        console.print(shown(f"{stopped.name}: run {run_id} stopped; its store was in memory, so it is gone.", "yellow"))
        return
    if not journaled:
        console.print(
            shown(f"{stopped.name}: stopped before run {run_id} was journaled; nothing to go on with.", "yellow")
        )
        return
    console.print(
        shown(f"{stopped.name}: this process stopped; run {run_id} stays where its journal ends.", "yellow"),
        soft_wrap=True,
    )
    console.print(Text("Go on with it, or end it:", style="bold"))
    for command in (f"runs resume {run_id} --agent {target}", f"runs cancel {run_id}"):
        console.print(shown(f"  eudaimon {command}{_store_flag(url)}", "cyan"), soft_wrap=True)
