"""A run's deps on a fleet: which travel to the workers, and which the workers bring.

Deps are never journaled. Locally they are whatever object the caller passed; on Temporal the
tools run in other processes, so:

- deps that serialize to JSON (a pydantic model, a dataclass of plain values, a dict, a user
  id) travel with the run's workflow (in Temporal's history, not the journal) and are rebuilt
  as the agent's `deps_type` for every tool call, on any worker, and for the workflow's own
  hooks, validators and middleware;
- deps that do not (a database pool, an HTTP session) stay in the process that prompted, where
  they serve what runs there (input guardrails, a `system_prompt` function), and the workers'
  own deps stand in for them: `create_worker(..., deps=...)` or `eudaimon worker --deps
  MODULE:ATTR`. A run whose deps stayed behind, on a worker that has none, fails at once
  saying so, rather than handing its tools `ctx.deps=None`.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from eudaimon.core.errors import ConfigurationError
from eudaimon.temporal._payloads import SentDeps

WORKER_OPTION = "create_worker(..., deps=...) or `eudaimon worker --deps MODULE:ATTR`"


def send_deps(deps: Any) -> SentDeps | None:
    """What of `deps` goes to the workers: their JSON, or only their type's name."""
    if deps is None:
        return None
    kind = type(deps)
    name = f"{kind.__module__}.{kind.__qualname__}"
    try:
        value = to_jsonable_python(deps)
    except (PydanticSerializationError, ValueError, TypeError, RecursionError):
        return SentDeps(name, kept=True)
    return SentDeps(name, value, plain=_plain(deps))


def received_deps(sent: SentDeps, deps_type: Any) -> Any:
    """The deps a run travelled with, rebuilt as `deps_type` (as they are when plain JSON).

    Raises:
        ConfigurationError: they cannot be rebuilt (no `deps_type` for an object that is not
            plain JSON, or JSON that does not validate as `deps_type`).
    """
    if deps_type is None:
        if sent.plain:
            return sent.value
        raise ConfigurationError(
            f"the run's deps are a {sent.type_name}, which a worker cannot rebuild from JSON without "
            f"its type: declare deps_type= on the agent, or give the workers their deps: {WORKER_OPTION}"
        )
    try:
        return _adapter(deps_type).validate_python(sent.value)
    except ValidationError as exc:
        raise ConfigurationError(
            f"the run's deps (a {sent.type_name}) do not rebuild as the agent's deps_type: {exc}"
        ) from exc


def missing_deps(sent: SentDeps | None, worker_has_deps: bool) -> str | None:
    """Why a run cannot give its tools deps on this worker, if it cannot."""
    if sent is None or not sent.kept or worker_has_deps:
        return None
    return (
        f"the run was prompted with deps of type {sent.type_name}, which cannot travel to a Temporal "
        f"worker (they are not JSON-serializable) and this worker has no deps of its own: give the "
        f"workers their deps, {WORKER_OPTION}, or prompt with deps that serialize"
    )


@functools.cache
def _adapter(deps_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(deps_type)


def _plain(value: Any) -> bool:
    """Whether `value` is JSON as it is: what arrives is then the very value sent."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False
