"""Engines: what drives a run when it is not the process that prompts (a Temporal fleet).

An engine is chosen with `Agent(..., engine=...)` and named by URL in the run's `run_started`
(`temporal://host:port/queue?namespace=…`), so that anyone holding the store — the CLI, a
server, another agent — reaches the process driving the run. The loop is the same one:
an engine only decides where `drive` runs and how a decision reaches it.

The runtime does not import the shells that provide engines: each registers an opener for its
URL scheme (`register_engine`) when its module loads, and `open_engine` loads the module a
built-in scheme names (`PROVIDERS`) the first time a URL asks for it.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable, Collection
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from eudaimon.core.errors import ConfigurationError, MissingExtra
from eudaimon.core.events import ApprovalDecided, ToolReconciled

if TYPE_CHECKING:
    from eudaimon.runtime.loop.cancel import CancellationToken
    from eudaimon.runtime.loop.config import RuntimeConfig
    from eudaimon.runtime.loop.journal import RunJournal
    from eudaimon.stores.base import EventStore
    from eudaimon.streaming import StreamEvent


class Driver(Protocol):
    """What an engine reads of the driver that hands it a run (`runs.RunDriver`): where runs are
    kept and the agent's config. Named here, not imported, so that engines sit below runs."""

    @property
    def store(self) -> EventStore: ...

    @property
    def config(self) -> RuntimeConfig: ...


class Engine(Protocol):
    @property
    def url(self) -> str:
        """Where the engine is reached; recorded in `run_started.engine`."""
        ...

    def drive(
        self, driver: Driver, journal: RunJournal, cancel: CancellationToken | None, *, emit: bool
    ) -> AsyncIterator[StreamEvent]:
        """Commit what `journal` buffers (a new run's `run_started`), have the engine drive the
        run until it finishes or waits, yield what happens (nothing unless `emit`), and leave
        `journal` holding the run's state as the store has it."""
        ...

    async def decide(self, store: EventStore, run_id: str, decision: ApprovalDecided | ToolReconciled) -> bool:
        """Hand a human's decision (already checked against `store`'s state) to the driver;
        False when nothing drives the run now, and the decision is to be appended to the store.
        A run the engine gave up on (journaled as such in `store` first) refuses it."""
        ...

    async def cancel(self, run_id: str, reason: str, by: str | None = None) -> bool:
        """Hand a request to cancel the run to its driver, which journals `run_cancelled` with
        `reason` and `by`; False when nothing drives the run now (it is cancelled in the store)."""
        ...

    async def drives(self, run_id: str) -> bool:
        """Whether the engine drives the run now: a run forked, or journaled while the engine
        was away, has nothing there until a resume starts it."""
        ...

    async def record_closed(self, store: EventStore, agents: Collection[str], since: datetime | None) -> list[str]:
        """Journal as failed each run of `agents` not ended in `store` whose execution the
        engine closed outside the loop at or after `since` (ever, when None): an operator
        terminated its workflow while it waited for a person. The ids journaled now."""
        ...


EngineOpener = Callable[[str], Engine]
"""Builds the engine a URL of its scheme names (`TemporalEngine.from_url`)."""

PROVIDERS: dict[str, tuple[str, str]] = {"temporal": ("eudaimon.temporal._engine", "temporal")}
"""Scheme -> (the module that registers its opener when loaded, the extra that module needs)."""

_openers: dict[str, EngineOpener] = {}
_opened: dict[str, Engine] = {}
"""One engine a URL: its clients (one per event loop) serve every run that names it."""


def register_engine(scheme: str, opener: EngineOpener) -> None:
    """Make `open_engine` answer URLs of `scheme` with `opener(url)`; a shell calls it on import."""
    _openers[scheme.lower()] = opener


def open_engine(url: str) -> Engine:
    """The engine a URL names: `temporal://host:port/task-queue[?namespace=N]`."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in _openers and scheme in PROVIDERS:
        module, extra = PROVIDERS[scheme]
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigurationError(
                f"{url!r} names a Temporal engine, which needs the extra: {MissingExtra.install_line(extra)} ({exc})"
            ) from exc
    opener = _openers.get(scheme)
    if opener is None:
        raise ConfigurationError(f"unsupported engine {url!r}; use 'temporal://host:port/task-queue'")
    engine = _opened.get(url)
    if engine is None:
        engine = _opened[url] = opener(url)
    return engine
