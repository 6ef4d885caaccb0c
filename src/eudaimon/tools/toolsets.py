"""Toolsets: sources of tools known only when a run starts, such as an MCP server.

A toolset lists its tools as `ToolRecord`s (name, schema, effect class); the run journals
them in `run_started`, and each record is bound back to a callable `Tool`. A run resumed
later binds the records it journaled, not what the toolset offers now, so it calls the same
tools with the same effect classes; a tool the toolset stopped offering still exists for the
run and answers the model with an error. Binding records into a run's config is the runtime's
(`eudaimon.runtime.loop.toolset_binding`).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence

from eudaimon.core.effects import Effect
from eudaimon.core.events import ToolRecord
from eudaimon.tools import Tool


class Toolset(ABC):
    """What `Agent(tools=[...])` accepts besides tools: an object that lists tools at run time."""

    @property
    @abstractmethod
    def source(self) -> str:
        """A stable name for the toolset, journaled with its tools to find it again on resume."""

    @abstractmethod
    async def list_tools(self) -> tuple[ToolRecord, ...]:
        """The tools offered now. Raises an `EudaimonError` naming the toolset if it cannot."""

    @abstractmethod
    def bind(self, record: ToolRecord, *, offered: bool) -> Tool:
        """A tool that calls `record` through this toolset; with `offered=False` (the toolset no
        longer lists it) calling it gives the model an error saying so."""

    async def aclose(self) -> None:  # noqa: B027 - optional: most toolsets hold nothing open
        """Release what the toolset holds open (a connection, a subprocess)."""


class Unconfigured(Toolset):
    """Stands in for a toolset a resumed run journaled but the agent no longer has."""

    def __init__(self, source: str) -> None:
        self._source = source

    @property
    def source(self) -> str:
        return self._source

    async def list_tools(self) -> tuple[ToolRecord, ...]:
        return ()

    def bind(self, record: ToolRecord, *, offered: bool) -> Tool:
        source = self._source

        def missing(**_: object) -> str:
            raise LookupError(f"tool {record.name!r} came from {source}, which this agent no longer has")

        return Tool(
            name=record.name,
            description=record.description,
            parameters=dict(record.parameters) or {"type": "object", "properties": {}},
            function=missing,
            effect=Effect(record.effect),
            idempotent=record.idempotent,
            requires_approval=record.requires_approval,
        ).compiled()


async def list_all(toolsets: Sequence[Toolset]) -> tuple[ToolRecord, ...]:
    """Every toolset's tools, listed together (servers start in parallel)."""
    listed = await asyncio.gather(*(t.list_tools() for t in toolsets))
    return tuple(record for records in listed for record in records)
