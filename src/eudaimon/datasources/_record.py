"""What every datasource backend shares: eudaimon's table, its record, its error, and the
contract a driver fills in (`Backend`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eudaimon.core.errors import EudaimonError

COMPLETIONS_TABLE = "eudaimon_tool_completions"
"""The table eudaimon keeps in a datasource: one row per call that committed there."""


class DatasourceError(EudaimonError):
    """A datasource could not be reached or refused eudaimon's own statements; the message
    names the datasource by its masked URL, never its password."""


@dataclass(frozen=True, slots=True)
class StoredCompletion:
    """A call's completion record, as its transaction committed it."""

    output: str
    is_error: bool


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
