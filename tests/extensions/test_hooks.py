"""Hooks compose: sync and async hooks run in order, and unimplemented methods cost nothing."""

from __future__ import annotations

from typing import Any

import pytest

from eudaimon.core.messages import Message, ToolCall
from eudaimon.hooks import AgentHook, HookSet, LoopState, ToolOutput
from eudaimon.models.base import ChatResponse


class Recorder(AgentHook):
    """An async hook recording every call, tagged with its name."""

    def __init__(self, tag: str, log: list[tuple[str, str, Any]]) -> None:
        self.tag = tag
        self.log = log

    async def on_iteration_start(self, state: LoopState) -> None:
        self.log.append((self.tag, "start", state.iteration))

    async def on_model_response(self, response: ChatResponse) -> None:
        self.log.append((self.tag, "response", response.text()))

    async def on_tool_call(self, call: ToolCall) -> None:
        self.log.append((self.tag, "tool_call", call.name))

    async def on_tool_result(self, call: ToolCall, result: ToolOutput) -> None:
        self.log.append((self.tag, "tool_result", (call.id, result.content, result.is_error)))

    async def on_iteration_end(self, state: LoopState) -> None:
        self.log.append((self.tag, "end", state.iteration))

    async def on_error(self, error: BaseException) -> None:
        self.log.append((self.tag, "error", str(error)))


class SyncStartOnly(AgentHook):
    """A sync hook overriding one method only."""

    def __init__(self, log: list[tuple[str, str, Any]]) -> None:
        self.log = log

    def on_iteration_start(self, state: LoopState) -> None:
        self.log.append(("sync", "start", state.iteration))


async def test_sync_and_async_hooks_run_in_registration_order() -> None:
    """Every hook method is awaited in the order the hooks were given, sync or async."""
    log: list[tuple[str, str, Any]] = []
    hooks = HookSet([Recorder("a", log), SyncStartOnly(log), Recorder("b", log)])
    state = LoopState(iteration=1, max_iterations=5, run_id="r1")
    call = ToolCall("c1", "search", {"q": "x"})

    await hooks.on_iteration_start(state)
    await hooks.on_model_response(ChatResponse(Message.assistant("hi")))
    await hooks.on_tool_call(call)
    await hooks.on_tool_result(call, ToolOutput("found", is_error=False))
    await hooks.on_error(RuntimeError("boom"))
    await hooks.on_iteration_end(state)

    assert log == [
        ("a", "start", 1),
        ("sync", "start", 1),
        ("b", "start", 1),
        ("a", "response", "hi"),
        ("b", "response", "hi"),
        ("a", "tool_call", "search"),
        ("b", "tool_call", "search"),
        ("a", "tool_result", ("c1", "found", False)),
        ("b", "tool_result", ("c1", "found", False)),
        ("a", "error", "boom"),
        ("b", "error", "boom"),
        ("a", "end", 1),
        ("b", "end", 1),
    ]


async def test_partial_hooks_are_skipped_for_methods_they_do_not_override() -> None:
    """A hook that overrides one method is not called (not even as a no-op) for the others."""
    log: list[tuple[str, str, Any]] = []
    hooks = HookSet(SyncStartOnly(log))

    assert hooks.handles("on_iteration_start")
    assert not hooks.handles("on_tool_call")
    assert not hooks.handles("on_model_response")
    await hooks.on_tool_call(ToolCall("c", "t"))
    await hooks.on_iteration_start(LoopState(2, 5))
    assert log == [("sync", "start", 2)]


async def test_no_hooks_is_falsy_and_does_nothing() -> None:
    """An agent without hooks (None, empty list, or a bare AgentHook) has an empty, falsy HookSet."""
    for empty in (None, [], AgentHook(), [AgentHook(), AgentHook()]):
        hooks = HookSet(empty)
        assert not hooks
        await hooks.on_iteration_start(LoopState(1, 1))
        await hooks.on_error(ValueError("x"))


async def test_duck_typed_hook_and_hookset_flattening() -> None:
    """Any object with some hook methods works; a HookSet given to HookSet keeps the same hooks."""
    seen: list[int] = []

    class Plain:
        def on_iteration_end(self, state: LoopState) -> None:
            seen.append(state.iteration)

    inner = HookSet(Plain())
    outer = HookSet(inner)
    assert outer.hooks == inner.hooks
    assert outer
    await outer.on_iteration_end(LoopState(3, 5))
    await outer.on_iteration_start(LoopState(3, 5))
    assert seen == [3]


async def test_a_hook_error_propagates_and_stops_later_hooks() -> None:
    """A hook that raises fails the call (as Daimon's `?` does); hooks after it do not run."""
    log: list[tuple[str, str, Any]] = []

    class Failing(AgentHook):
        async def on_iteration_start(self, state: LoopState) -> None:
            raise RuntimeError("hook failed")

    hooks = HookSet([Failing(), Recorder("after", log)])
    with pytest.raises(RuntimeError, match="hook failed"):
        await hooks.on_iteration_start(LoopState(1, 1))
    assert log == []


def test_loop_state_is_a_frozen_value() -> None:
    """LoopState is an immutable value, equal by its fields."""
    state = LoopState(1, 10, "run")
    assert state == LoopState(iteration=1, max_iterations=10, run_id="run")
    with pytest.raises(AttributeError):
        state.iteration = 2  # type: ignore[misc]
