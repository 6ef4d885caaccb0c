"""What every datasource backend shares: eudaimon's table, its record, its error, and the
contract a driver fills in (`Backend`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eudaimon.core.errors import EudaimonError

COMPLETIONS_TABLE = "eudaimon_tool_completions"
"""The table eudaimon keeps in a datasource: one row per call that committed there."""


class DatasourceError(EudaimonError):
    """A datasource could not be reached or refused eudaimon's own statements; the message
    names the datasource by its masked URL, never its password."""


class DatasourceUnreachable(DatasourceError):
    """The datasource kept failing eudaimon's own statements for one call, through every try
    of the call's own retries: not the tool's failure. Whether an earlier try committed is not
    known until the datasource answers again (the next attempt looks the call up first),
    unless `maybe_committed` is False."""

    def __init__(self, message: str, *, maybe_committed: bool = True) -> None:
        super().__init__(message)
        self.maybe_committed = maybe_committed
        """False only when no commit can have landed: this is the call's first attempt and no
        try of it reached its commit (every try failed opening the transaction, or in the
        tool's own statements on a dead connection, or looking up)."""


class DatasourceOutcomeUnknown(DatasourceUnreachable):
    """A local run stopped on a datasource call that may have committed (`maybe_committed`):
    the call is left started and unfinished, as a crash leaves it, never answered to the
    model. Resuming the run looks the call up and runs it only if it did not commit."""


@dataclass(frozen=True, slots=True)
class StoredCompletion:
    """A call's completion record, as its transaction committed it."""

    output: str
    is_error: bool


ErrorOf = Callable[[str, BaseException], DatasourceError]
"""`Datasource.error`: what a backend raises when `doing` failed with `exc` (the URL scrubbed)."""


class Backend:
    """One driver's way of doing `Datasource`'s things; see there."""

    async def begin(self, is_async: bool) -> Any:
        raise NotImplementedError

    async def commit(self, conn: Any, run_id: str, call_id: str, key: str, output: str, is_error: bool) -> bool:
        raise NotImplementedError

    async def rollback(self, conn: Any, reuse: bool) -> None:
        raise NotImplementedError

    def lost(self, conn: Any) -> bool:
        return False

    async def lookup(self, run_id: str, call_id: str) -> StoredCompletion | None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError
