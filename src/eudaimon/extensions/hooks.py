"""Hooks: callbacks that observe a run's loop without changing it.

A hook sees the loop as it happens: an iteration starting, the model's answer, each tool call
and its result, an iteration ending, a tool failing. It cannot rewrite anything (that is
`eudaimon.middleware`'s job); an exception it raises propagates and fails the run, as in
Daimon, where every hook method returns a `Result`.

The runtime holds one `HookSet` per agent and calls it at each point of the loop:

    await hooks.on_iteration_start(LoopState(iteration, max_iterations, run_id))

`HookSet` works out once, when it is built, which hooks override which method, so an agent
without hooks, or with a hook that overrides one method, pays an empty loop per call.

A hook method may also take a `ctx: ToolContext[Deps]` parameter (found by its annotation):
it then gets the run's context, with the caller's `deps` and the current `step`.

Hooks run live only: when a run is resumed, the events already in its journal are not
replayed through them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eudaimon.core.messages import ToolCall
from eudaimon.extensions._one_or_many import one_or_many
from eudaimon.models.base import ChatResponse
from eudaimon.tools.context import ToolContext, call_with_context

__all__ = ["AgentHook", "HookSet", "LoopState", "ToolOutput"]


@dataclass(frozen=True, slots=True)
class LoopState:
    """Where the loop is: what Daimon calls `AgentState`."""

    iteration: int
    """1-based; it increases with each model call."""
    max_iterations: int
    run_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The result of one tool call, as the model will see it."""

    content: str
    is_error: bool = False


class AgentHook:
    """Base class of lifecycle observers. Override only the methods you need.

    Each method may be defined `def` or `async def`, and may add a `ctx: ToolContext[Deps]`
    parameter (anywhere; found by its annotation) to get the run's context and deps. The
    defaults do nothing and are skipped by `HookSet` without being called.
    """

    def on_iteration_start(self, state: LoopState) -> Any:
        """Called at the start of each iteration, before the model is asked."""

    def on_model_response(self, response: ChatResponse) -> Any:
        """Called after the model answered (and middleware saw the answer), before tools run."""

    def on_tool_call(self, call: ToolCall) -> Any:
        """Called before a tool call is executed: `call.arguments` is the dict the tool will get
        (after middleware, validated, approved). Raising fails the run before the call runs."""

    def on_tool_result(self, call: ToolCall, result: ToolOutput) -> Any:
        """Called after a tool call finished, with the result the model will see."""

    def on_iteration_end(self, state: LoopState) -> Any:
        """Called at the end of an iteration: after its tools ran, or after the final answer."""

    def on_error(self, error: BaseException) -> Any:
        """Called when a tool raised; the error still becomes an error result for the model."""


_METHODS = (
    "on_iteration_start",
    "on_model_response",
    "on_tool_call",
    "on_tool_result",
    "on_iteration_end",
    "on_error",
)


def _overrides(hook: object, name: str) -> Callable[..., Any] | None:
    """The hook's bound method `name`, or None when it is missing or AgentHook's no-op."""
    own = getattr(type(hook), name, None)
    if own is None or own is getattr(AgentHook, name):
        return None
    method: Callable[..., Any] = getattr(hook, name)
    return method


async def _call_all(methods: tuple[Callable[..., Any], ...], ctx: ToolContext[Any] | None, *args: Any) -> None:
    for method in methods:
        await call_with_context(method, ctx, *args)


class HookSet:
    """Several hooks behaving as one: each method calls the hooks in order, awaiting each.

    Args:
        hooks: None, one hook, or a sequence of hooks (`AgentHook` subclasses, or any object
            with some of its methods).
    """

    __slots__ = ("_by_method", "hooks")

    hooks: tuple[object, ...]
    """The hooks, in the order they are called."""

    def __init__(self, hooks: object | Sequence[object] | None = None) -> None:
        items = hooks.hooks if isinstance(hooks, HookSet) else one_or_many(hooks)
        self.hooks = items
        # Precomputed so a step pays only for the methods someone actually defined.
        self._by_method: dict[str, tuple[Callable[..., Any], ...]] = {
            name: tuple(m for h in items if (m := _overrides(h, name)) is not None) for name in _METHODS
        }

    def __bool__(self) -> bool:
        """True when at least one hook overrides at least one method."""
        return any(self._by_method.values())

    def __len__(self) -> int:
        return len(self.hooks)

    def handles(self, name: str) -> bool:
        """Whether any hook overrides the method `name` (lets the loop skip building arguments)."""
        return bool(self._by_method.get(name))

    async def on_iteration_start(self, state: LoopState, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_iteration_start`, in order."""
        if methods := self._by_method["on_iteration_start"]:
            await _call_all(methods, ctx, state)

    async def on_model_response(self, response: ChatResponse, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_model_response`, in order."""
        if methods := self._by_method["on_model_response"]:
            await _call_all(methods, ctx, response)

    async def on_tool_call(self, call: ToolCall, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_tool_call`, in order."""
        if methods := self._by_method["on_tool_call"]:
            await _call_all(methods, ctx, call)

    async def on_tool_result(self, call: ToolCall, result: ToolOutput, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_tool_result`, in order."""
        if methods := self._by_method["on_tool_result"]:
            await _call_all(methods, ctx, call, result)

    async def on_iteration_end(self, state: LoopState, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_iteration_end`, in order."""
        if methods := self._by_method["on_iteration_end"]:
            await _call_all(methods, ctx, state)

    async def on_error(self, error: BaseException, ctx: ToolContext[Any] | None = None) -> None:
        """Run every hook's `on_error`, in order."""
        if methods := self._by_method["on_error"]:
            await _call_all(methods, ctx, error)

    def __repr__(self) -> str:
        return f"HookSet({[type(h).__name__ for h in self.hooks]!r})"
