"""`ToolContext[D]`: what user code may know about the run it serves, and how it asks for it.

A tool, a dynamic instruction (`system_prompt=fn`), a `prepare` function, an output validator,
a guardrail or a hook asks for the context by annotating one parameter `ToolContext` or
`ToolContext[Deps]`. The parameter is found by its annotation, never by its name, and is kept
out of a tool's JSON Schema: the model never sees it and cannot fill it.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, get_origin, get_type_hints

from typing_extensions import TypeVar

DepsT = TypeVar("DepsT", default=Any)
"""The type of `ToolContext.deps`: the agent's `deps_type` (Any when not parameterised)."""


@dataclass(frozen=True, slots=True)
class ToolContext(Generic[DepsT]):
    """The run (and, for a tool, the call) that user code serves.

    `idempotency_key` is the same for every attempt of a call, across retries and crash
    recovery: pass it to the system you change so that a repeated call is recognised.
    `deps` is what the caller passed as `prompt(..., deps=…)` or `resume(..., deps=…)`: a
    database client, an HTTP session, a user id. It is never journaled.

    Outside a tool call (instructions, `prepare`, validators, guardrails, hooks) `call_id` and
    `idempotency_key` are empty and `attempt` is 0.
    """

    run_id: str
    call_id: str = ""
    idempotency_key: str = ""
    attempt: int = 1
    deps: DepsT = None  # type: ignore[assignment]
    step: int = 0
    """The model call this belongs to (1 for the first); 0 before the first call."""
    fencing_token: int = 0
    """Grows whenever another process takes the run over: the count of events the journal held
    when this call's driver took the run over, so every driver that takes over later and acts
    holds a larger one (DESIGN §8). A system that keeps the largest token it has seen and
    refuses smaller ones turns away a stalled process that woke up after it was replaced."""
    db: Any = None
    """For a tool declared `@tool(datasource=name)`: a connection to that datasource inside an
    open transaction (psycopg's `AsyncConnection` for an async tool on PostgreSQL, its
    `Connection` for a sync one, a `sqlite3.Connection` on SQLite). eudaimon commits it with the
    call's completion record once the tool returns, and rolls it back if the tool raises: do not
    commit it yourself. None for any other tool."""


def is_context_annotation(annotation: Any) -> bool:
    """True for `ToolContext` and any `ToolContext[T]`, also when the annotation is still the
    string `from __future__ import annotations` left (its names could not be resolved)."""
    if isinstance(annotation, str):
        head = annotation.split("[", 1)[0].strip()
        return head == "ToolContext" or head.endswith(".ToolContext")
    return annotation is ToolContext or get_origin(annotation) is ToolContext


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of `fn`'s parameter annotated `ToolContext` (or `ToolContext[T]`), if any."""
    found = _context_slot(fn)
    return found[1] if found is not None else None


def _context_slot(fn: Callable[..., Any]) -> tuple[int, str] | None:
    """The position and name of the context parameter (positions as a call to `fn` sees them)."""
    key = getattr(fn, "__func__", fn)
    try:
        return _SLOTS[key]
    except (KeyError, TypeError):
        pass
    found: tuple[int, str] | None = None
    try:
        hints = get_type_hints(fn)
    except (NameError, TypeError, AttributeError):
        hints = {}
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    for position, parameter in enumerate(parameters):
        # A hint that did not resolve (a class local to a function) is read as written.
        if is_context_annotation(hints.get(parameter.name, parameter.annotation)):
            found = (position, parameter.name)
            break
    with contextlib.suppress(TypeError):
        _SLOTS[key] = found
    return found


_SLOTS: dict[Any, tuple[int, str] | None] = {}
"""Where each function takes its context: looked up once per function, not once per call."""


async def call_with_context(fn: Callable[..., Any], ctx: ToolContext[Any] | None, *args: Any) -> Any:
    """Call user code (sync or async) with `args`, and `ctx` where it asks for a context.

    The context goes to the parameter annotated for it, the other arguments to the other
    parameters in order. The result is awaited when it is awaitable.
    """
    slot = _context_slot(fn) if ctx is not None else None
    if slot is None:
        result = fn(*args)
    else:
        position = slot[0]
        result = fn(*args[:position], ctx, *args[position:])
    if inspect.isawaitable(result):
        result = await result
    return result
