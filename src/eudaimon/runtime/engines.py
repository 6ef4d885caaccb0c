"""Engines: what drives a run when it is not the process that prompts (a Temporal fleet).

An engine is chosen with `Agent(..., engine=...)` and named by URL in the run's `run_started`
(`temporal://host:port/queue?namespace=…`), so that anyone holding the store — the CLI, a
server, another agent — reaches the process driving the run. The loop is the same one:
an engine only decides where `drive` runs and how a decision reaches it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ApprovalDecided, ToolReconciled

if TYPE_CHECKING:
    from eudaimon.runtime.cancel import CancellationToken
    from eudaimon.runtime.journal import RunJournal
    from eudaimon.runtime.runs import RunDriver
    from eudaimon.streaming import StreamEvent


class Engine(Protocol):
    @property
    def url(self) -> str:
        """Where the engine is reached; recorded in `run_started.engine`."""
        ...

    def drive(
        self, driver: RunDriver, journal: RunJournal, cancel: CancellationToken | None, *, emit: bool
    ) -> AsyncIterator[StreamEvent]:
        """Commit what `journal` buffers (a new run's `run_started`), have the engine drive the
        run until it finishes or waits, yield what happens (nothing unless `emit`), and leave
        `journal` holding the run's state as the store has it."""
        ...

    async def decide(self, run_id: str, decision: ApprovalDecided | ToolReconciled) -> bool:
        """Hand a human's decision (already checked against the store's state) to the driver;
        False when nothing drives the run now, and the decision is to be appended to the store."""
        ...


def open_engine(url: str) -> Engine:
    """The engine a URL names: `temporal://host:port/task-queue[?namespace=N]`."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "temporal":
        try:
            from eudaimon.temporal import TemporalEngine
        except ImportError as exc:
            raise ConfigurationError(
                f"{url!r} names a Temporal engine, which needs the extra: pip install 'eudaimon[temporal]' ({exc})"
            ) from exc
        return TemporalEngine.from_url(url)
    raise ConfigurationError(f"unsupported engine {url!r}; use 'temporal://host:port/task-queue'")
