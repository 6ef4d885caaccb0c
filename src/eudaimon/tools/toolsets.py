"""Toolsets: sources of tools known only when a run starts, such as an MCP server.

A toolset lists its tools as `ToolRecord`s (name, schema, effect class); the run journals
them in `run_started`, and each record is bound back to a callable `Tool`. A run resumed
later binds the records it journaled, not what the toolset offers now, so it calls the same
tools with the same effect classes; a tool the toolset stopped offering still exists for the
run and answers the model with an error.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, replace

from eudaimon.core.digest import digest
from eudaimon.core.effects import Effect
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ToolRecord
from eudaimon.runtime.config import RuntimeConfig
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


class _Unconfigured(Toolset):
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


def bind_all(
    base: RuntimeConfig, toolsets: Sequence[Toolset], records: Sequence[ToolRecord], *, live: Sequence[ToolRecord]
) -> RuntimeConfig:
    """`base` with the journaled `records` bound as tools; `live` is what the toolsets offer
    now (the same records for a new run), to tell which journaled tools disappeared."""
    if not records:
        return base
    by_source = {t.source: t for t in toolsets}
    offered = {(r.source, r.remote_name) for r in live}
    tools = dict(base.tools)
    for record in records:
        if record.name in tools:
            raise ConfigurationError(
                f"two tools are named {record.name!r} (one from {record.source}); give the toolset a prefix="
            )
        toolset = by_source.get(record.source) or _Unconfigured(record.source)
        tools[record.name] = toolset.bind(record, offered=(record.source, record.remote_name) in offered)
    return replace(
        base,
        tools=tools,
        tool_specs=tuple(t.spec for t in tools.values()),
        decide=replace(base.decide, tools={n: t.traits for n, t in tools.items()}),
    )


class ToolsetBinding:
    """The configs an agent's toolsets give its runs: one per list of tools, bound once.

    A new run lists the toolsets now (connecting to them); a resumed run binds the tools it
    journaled, to the toolsets that still offer them. Configs are cached by the records and
    what is offered, so runs that see the same tools share one config.
    """

    def __init__(self, base: RuntimeConfig, toolsets: Sequence[Toolset]) -> None:
        self.base = base
        self.toolsets = tuple(toolsets)
        self._bound: dict[str, RuntimeConfig] = {}

    async def fresh(self) -> tuple[tuple[ToolRecord, ...], RuntimeConfig | None]:
        """For a new run: the toolsets' tools now, and the config with them (None: no toolsets).

        Raises:
            MCPConnectionError (an `EudaimonError`): a server cannot be started or reached.
        """
        if not self.toolsets:
            return (), None
        records = await list_all(self.toolsets)
        return records, self._config(records, records)

    async def resumed(self, tools: Sequence[ToolRecord], finished: bool) -> RuntimeConfig | None:
        """For a resumed run that journaled `tools`: the config with them bound to the
        toolsets that offered them (a tool no longer offered answers the model with an error)."""
        if not tools or finished:
            return None
        sources = {r.source for r in tools}
        live = await list_all([t for t in self.toolsets if t.source in sources])
        return self._config(tuple(tools), live)

    def _config(self, records: tuple[ToolRecord, ...], live: tuple[ToolRecord, ...]) -> RuntimeConfig:
        key = digest([[asdict(r) for r in records], sorted((r.source, r.remote_name) for r in live)])
        config = self._bound.get(key)
        if config is None:
            config = self._bound[key] = bind_all(self.base, self.toolsets, records, live=live)
        return config
