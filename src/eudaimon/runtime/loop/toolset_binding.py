"""Binding a run's toolset records into the config it runs with, once per list of tools.

Here rather than in `eudaimon.tools.toolsets`: the result is a `RuntimeConfig`, which the
runtime owns, and tools sit below the runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace

from eudaimon.core.digest import digest
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ToolRecord
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.tools.toolsets import Toolset, Unconfigured, list_all


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
        toolset = by_source.get(record.source) or Unconfigured(record.source)
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
