"""What every `eudaimon` command shares: the store option, running async work, failing well."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import platformdirs
import typer
from rich.console import Console
from rich.text import Text

from eudaimon.agent import Agent
from eudaimon.core.errors import ConfigurationError, EudaimonError, RunNotFound
from eudaimon.core.events import Event
from eudaimon.core.state import RunState, Status
from eudaimon.stores.base import EventStore
from eudaimon.stores.url import open_store

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
    path = Path(platformdirs.user_data_dir("eudaimon")) / "runs.db"
    return f"sqlite:///{path.resolve()}"


def resolve_store_url(store: str | None) -> str:
    """The `--store` value (typer already fell back to `$EUDAIMON_STORE`), else the default."""
    return store or os.environ.get("EUDAIMON_STORE") or default_store_url()


def shown_url(url: str) -> str:
    """`url` without its password, for printing."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else ""
    return parts._replace(netloc=f"{user}{host}").geturl()


def out() -> Console:
    # Rich draws 80 columns when stdout is not a terminal; a pipe or a file gets room for run ids.
    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(highlight=False, width=_PIPE_WIDTH if wide else None)


def fail(message: str) -> NoReturn:
    error = Console(stderr=True, highlight=False)
    error.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)
    raise typer.Exit(1)


def run_async(work: Awaitable[T]) -> T:
    """Run `work` on a fresh event loop; a journal or usage error becomes a message and exit 1."""
    try:
        return asyncio.run(_as_coroutine(work))
    except EudaimonError as exc:
        fail(str(exc))


async def _as_coroutine(work: Awaitable[T]) -> T:
    return await work


async def with_store(url: str, use: Callable[[EventStore], Awaitable[T]]) -> T:
    try:
        store = open_store(url)
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
    state = RunState.from_events(events)
    assert state is not None  # callers pass a non-empty journal
    return state


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
