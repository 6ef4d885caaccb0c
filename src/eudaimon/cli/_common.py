"""What every `eudaimon` command shares: the store option, running async work, failing well."""

from __future__ import annotations

import asyncio
import gc
import importlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from eudaimon.cli._escape import visible
from eudaimon.core.errors import ConfigurationError, CorruptEvent, EudaimonError, JournalError, RunNotFound
from eudaimon.core.events import Event
from eudaimon.core.redact import redact
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore
from eudaimon.stores.url import open_store

if TYPE_CHECKING:  # imported by load_agent: `eudaimon --help` does not load the agent surface
    from eudaimon.agent import Agent

T = TypeVar("T")
_PIPE_WIDTH = 140

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="EUDAIMON_STORE",
        show_default=False,
        help="Journal URL: sqlite:///path.db, postgresql://…, memory:. "
        "Default: $EUDAIMON_STORE, else runs.db in the user data directory.",
    ),
]
RunArgument = Annotated[str, typer.Argument(help="The run id, as `eudaimon runs list` shows it.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def default_store_url() -> str:
    """`sqlite:///<user data dir>/runs.db`: where runs go when no store is named."""
    path = user_data_dir() / "runs.db"
    return f"sqlite:///{path.resolve()}"


def user_data_dir() -> Path:
    """The per-user data directory of eudaimon, where platformdirs (which eudaimon once used)
    puts it: $XDG_DATA_HOME or ~/.local/share on Linux and BSD, ~/Library/Application Support
    on macOS, %LOCALAPPDATA%\\eudaimon on Windows. Five lines do not warrant a dependency."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA", "").strip() or str(Path.home() / "AppData" / "Local")
        return Path(base) / "eudaimon" / "eudaimon"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "eudaimon"
    return Path(os.environ.get("XDG_DATA_HOME", "").strip() or Path.home() / ".local" / "share") / "eudaimon"


def resolve_store_url(store: str | None) -> str:
    """The `--store` value (typer already fell back to `$EUDAIMON_STORE`), else the default."""
    return store or os.environ.get("EUDAIMON_STORE") or default_store_url()


def counted(n: int, noun: str) -> str:
    """ "1 run", "3 runs": a count with its noun, as a person reads it."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def shown_url(url: str) -> str:
    """`url` with every credential in it masked (`eudaimon.core.redact`), for printing."""
    return redact(url)


def out() -> Console:
    # Rich draws 80 columns when stdout is not a terminal; a pipe or a file gets room for run ids.
    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(highlight=False, width=_PIPE_WIDTH if wide else None)


def fail(message: str, *, then: Callable[[], object] | None = None) -> NoReturn:
    """Say what went wrong on stderr and exit 1; `then` prints what comes next (on stdout)."""
    error = Console(stderr=True, highlight=False)
    error.print(Text("error: ", style="bold red") + Text(visible(redact(message))), soft_wrap=True)
    if then is not None:
        then()
    raise typer.Exit(1)


def run_async(work: Awaitable[T]) -> T:
    """Run `work` on a fresh event loop; a journal or usage error becomes a message and exit 1.

    What the work left in reference cycles is collected before this returns: a Temporal client
    freed only at the interpreter's teardown can abort the process from its own threads
    (SIGABRT, "PyGILState_Release … finalizing", temporalio/sdk-python#300); freed here, while
    the interpreter is whole, it closes quietly.
    """
    try:
        return asyncio.run(_as_coroutine(work))
    except EudaimonError as exc:
        fail(str(exc))
    finally:
        gc.collect()


async def _as_coroutine(work: Awaitable[T]) -> T:
    return await work


def make_default_directory(url: str) -> None:
    """Create the user data directory when `url` is the default journal, which a writer may
    create; any other journal's directory must exist (a typo must not journal elsewhere)."""
    if url == default_store_url():
        Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)


async def with_store(url: str, use: Callable[[EventStore], Awaitable[T]], *, read_only: bool = False) -> T:
    """`use(store)` on the store `url` names, closed afterwards.

    `read_only` is for commands that only read: they never create a journal (nor its
    directory), and can read one they may not write. A writer creates the default journal's
    directory (the user data directory) and no other."""
    if not read_only:
        make_default_directory(url)
    try:
        store = open_store(url, read_only=read_only)
    except ImportError as exc:  # a backend whose driver or module is missing from this install
        raise ConfigurationError(f"cannot open the store {shown_url(url)}: {exc}") from exc
    try:
        return await use(store)
    finally:
        await store.close()


async def load_events(store: EventStore, run_id: str) -> list[Event]:
    events = await store.load(run_id)
    if not events:
        raise RunNotFound(run_id)
    return events


def fold(events: list[Event]) -> RunState:
    """The run's state; a journal the fold refuses is a `JournalError` naming the run and seq.

    Raises:
        JournalError: an event cannot be folded (a damaged or hand-edited journal).
    """
    state: RunState | None = None
    for event in events:
        try:
            if state is None:
                state = RunState.from_events([event])
            else:
                state.apply(event)
        except EudaimonError as exc:
            raise JournalError(f"{exc}; the journal is damaged: {_rows_hint(event.run_id)}") from exc
        except Exception as exc:  # the fold's own checks missed it: still one line, with the facts
            raise JournalError(
                f"run {event.run_id} seq {event.seq} ({event.type}) cannot be folded "
                f"({type(exc).__name__}: {exc}); the journal is damaged: {_rows_hint(event.run_id)}"
            ) from exc
    assert state is not None  # callers pass a non-empty journal
    return state


async def read_state(store: EventStore, run_id: str, at_seq: int | None = None) -> RunState:
    """`load_state` (the path `agent.state()` takes), for a command: a journal the fold refuses
    is a `JournalError` naming the run and saying how to see its rows, whatever the fold raised.

    Raises:
        RunNotFound: no such run.
        JournalError: a row does not parse, or the rows do not fold.
    """
    try:
        return await load_state(store, run_id, at_seq)
    except (RunNotFound, ConfigurationError):
        raise
    except CorruptEvent as exc:
        raise JournalError(f"{exc}; the journal is damaged: {_rows_hint(run_id)}") from exc
    except EudaimonError:
        raise
    except Exception as exc:  # the fold's own checks missed it: still one line, with the facts
        raise JournalError(
            f"run {run_id} cannot be folded ({type(exc).__name__}: {exc}); the journal is damaged: {_rows_hint(run_id)}"
        ) from exc


def folded(events: list[Event]) -> RunState:
    """`fold` for a command's top level: a damaged journal is one line and exit 1."""
    try:
        return fold(events)
    except EudaimonError as exc:
        fail(str(exc))


def _rows_hint(run_id: str) -> str:
    return f"`eudaimon runs events {run_id} --json` prints its rows as stored"


def exit_for(status: str) -> None:
    """Exit 1 when a run ended badly, so scripts can tell; a paused run is not a failure."""
    if Status(status) in (Status.FAILED, Status.BUDGET_EXCEEDED, Status.CANCELLED):
        raise typer.Exit(1)


def journal_url(store: EventStore, fallback: str) -> str:
    """The URL of the journal an agent actually wrote to (its own store may not be `--store`)."""
    path = getattr(store, "path", None)
    return f"sqlite:///{os.path.abspath(path)}" if isinstance(path, str) and path != ":memory:" else fallback


@contextmanager
def environ(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def load_agent(target: str) -> Agent:
    from eudaimon.agent import Agent

    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        fail(f'{target!r} is not MODULE:ATTR; write e.g. `eudaimon run myapp.agents:support "hello"`')
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would, so local modules import
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            fail(f"cannot import module {module_name!r} ({exc}); run from the directory that contains it")
        raise
    try:
        for part in attr.split("."):
            found = getattr(found, part)
    except AttributeError:
        fail(f"module {module_name!r} has no attribute {attr!r}")
    if not isinstance(found, Agent) and callable(found):
        try:
            found = found()
        except EudaimonError as exc:
            fail(f"{target} raised {type(exc).__name__}: {exc}")
    if not isinstance(found, Agent):
        fail(f"{target} is a {type(found).__name__}, not an Agent or a function returning one")
    return found
