"""The run context user code gets, and what a step offers the model (`@tool(prepare=…)`).

A `ToolContext` is built from the run's state and the caller's `deps` (held by the journal,
never written to it). For agents with `prepare` functions, the tools offered at a step are
decided here before the request is built; the loop journals what was offered with the
step's `model_attempt_started`, so a resumed run or a look back in time sees what the model saw.
"""

from __future__ import annotations

import inspect
from typing import Any

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import ToolSpec
from eudaimon.core.state import RunState
from eudaimon.extensions.hooks import LoopState
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.tools import ToolContext


def run_context(journal: RunJournal, step: int | None = None, call_id: str = "") -> ToolContext[Any]:
    """The context of the run outside a tool's execution: no idempotency key, attempt 0."""
    state = journal.state
    return ToolContext(state.run_id, call_id, "", 0, journal.deps, state.steps if step is None else step)


def loop_state(state: RunState, cfg: RuntimeConfig, iteration: int) -> LoopState:
    """What a hook is told of the loop at `iteration`."""
    return LoopState(iteration=iteration, max_iterations=cfg.decide.max_iterations, run_id=state.run_id)


async def offered_specs(journal: RunJournal, cfg: RuntimeConfig, step: int) -> tuple[ToolSpec, ...]:
    """The specs to offer at `step`: each tool's own, or what its `prepare` made of it.

    Raises:
        ConfigurationError: a `prepare` returned something that is not a `ToolSpec` or None,
            or renamed its tool (calls are routed by name, so a renamed tool could not run).
    """
    if not cfg.prepared:
        return cfg.tool_specs
    ctx = run_context(journal, step)
    offered: list[ToolSpec] = []
    for spec in cfg.tool_specs:
        tool = cfg.tools.get(spec.name)
        if tool is None or tool.prepare is None:
            offered.append(spec)
            continue
        prepared = tool.prepare(ctx, spec)
        if inspect.isawaitable(prepared):
            prepared = await prepared
        if prepared is None:
            continue
        if not isinstance(prepared, ToolSpec):
            raise ConfigurationError(
                f"prepare of tool {spec.name!r} returned {type(prepared).__name__}; return a ToolSpec or None"
            )
        if prepared.name != spec.name:
            raise ConfigurationError(
                f"prepare of tool {spec.name!r} renamed it to {prepared.name!r}; a prepared spec keeps its name"
            )
        offered.append(prepared)
    return tuple(offered)
