"""Which module builds each agent a worker serves: the one module its workflows share with it.

A workflow builds its agent inside Temporal's sandbox, from the same module the worker
loaded (`--agent MODULE:ATTR`), so that hooks, middleware and guardrails run as sandboxed
workflow code. The sandbox re-imports every eudaimon module but passes this one through, so
that the worker can tell its workflows where their agents are.
"""

from __future__ import annotations

_SPECS: dict[str, str] = {}
_WITH_DEPS: set[str] = set()


def serve(agent_name: str, spec: str, *, has_deps: bool = False) -> None:
    """Record that `agent_name` is built by `spec` (`MODULE:ATTR`), and whether this worker
    gives its tools deps of its own."""
    _SPECS[agent_name] = spec
    if has_deps:
        _WITH_DEPS.add(agent_name)
    else:
        _WITH_DEPS.discard(agent_name)


def has_deps(agent_name: str) -> bool:
    return agent_name in _WITH_DEPS


def spec_for(agent_name: str) -> str:
    spec = _SPECS.get(agent_name)
    if spec is None:
        served = ", ".join(sorted(_SPECS)) or "none"
        raise LookupError(
            f"this worker serves no agent named {agent_name!r} (it serves: {served}); start a worker "
            f"with `eudaimon worker --agent MODULE:ATTR` for it on this task queue"
        )
    return spec
