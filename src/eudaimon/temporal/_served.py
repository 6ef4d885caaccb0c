"""Which agents a worker serves: the one module its workflows share with it.

A workflow finds its agent here. On a worker that passes eudaimon through the sandbox (the
default, `create_worker(..., sandboxed=False)`), it is the worker's own `Agent`, built once;
under Temporal's full sandbox (`sandboxed=True`, and the strict replay of recorded histories)
eudaimon is re-imported per workflow, the worker's object is of another class, and the
workflow builds the agent again from `spec` (`MODULE:ATTR`). This module is passed through in
both, so that the worker can tell its workflows where their agents are.

Audit of module-level state shared by every workflow of a passing-through worker: these
registries (written when a worker is created, read by workflows), `_seams._RAISED` (exception
classes named after a tool's, created once and never changed), and caches of pure functions
(`functools.cache` of schemas and installed distributions). Nothing a workflow writes is kept
between runs.
"""

from __future__ import annotations

from typing import Any

_SPECS: dict[str, str] = {}
_WITH_DEPS: set[str] = set()
_AGENTS: dict[str, Any] = {}


def serve(agent_name: str, spec: str, *, has_deps: bool = False, agent: Any = None) -> None:
    """Record that `agent_name` is built by `spec` (`MODULE:ATTR`), the agent itself when the
    worker has it, and whether this worker gives its tools deps of its own."""
    _SPECS[agent_name] = spec
    if agent is None:
        _AGENTS.pop(agent_name, None)
    else:
        _AGENTS[agent_name] = agent
    if has_deps:
        _WITH_DEPS.add(agent_name)
    else:
        _WITH_DEPS.discard(agent_name)


def has_deps(agent_name: str) -> bool:
    return agent_name in _WITH_DEPS


def agent_for(agent_name: str) -> Any:
    """The worker's own agent named `agent_name`, or None (the workflow builds it from `spec_for`)."""
    return _AGENTS.get(agent_name)


def spec_for(agent_name: str) -> str:
    spec = _SPECS.get(agent_name)
    if spec is None:
        served = ", ".join(sorted(_SPECS)) or "none"
        raise LookupError(
            f"this worker serves no agent named {agent_name!r} (it serves: {served}); start a worker "
            f"with `eudaimon worker --agent MODULE:ATTR` for it on this task queue"
        )
    return spec
