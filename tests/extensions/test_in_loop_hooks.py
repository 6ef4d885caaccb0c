"""Hooks inside the one loop: all six fire, in Daimon's order, with the loop's own state."""

from __future__ import annotations

from typing import Any

import pytest
from _in_loop_support import answer, call, payloads, types

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.errors import RunFailedError
from eudaimon.hooks import AgentHook, LoopState, ToolOutput
from eudaimon.models import ChatResponse, ScriptedModel
from eudaimon.retry import ToolRetryPolicy
from support.tools import lookup

Log = list[tuple[str, str, Any]]


class Recorder(AgentHook):
    """An async hook overriding all six methods."""

    def __init__(self, tag: str, log: Log) -> None:
        self.tag, self.log = tag, log

    async def on_iteration_start(self, state: LoopState) -> None:
        self.log.append((self.tag, "iteration_start", state))

    async def on_model_response(self, response: ChatResponse) -> None:
        self.log.append((self.tag, "model_response", response.text() or [c.name for c in response.message.tool_calls]))

    async def on_tool_call(self, call: ToolCall) -> None:
        self.log.append((self.tag, "tool_call", call.name))

    async def on_tool_result(self, call: ToolCall, result: ToolOutput) -> None:
        self.log.append((self.tag, "tool_result", (call.id, result.content, result.is_error)))

    async def on_iteration_end(self, state: LoopState) -> None:
        self.log.append((self.tag, "iteration_end", state))

    async def on_error(self, error: BaseException) -> None:
        self.log.append((self.tag, "error", repr(error)))


class SyncRecorder(AgentHook):
    """A sync hook overriding a subset of the methods."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def on_iteration_start(self, state: LoopState) -> None:
        self.log.append(("sync", "iteration_start", state.iteration))

    def on_tool_call(self, call: ToolCall) -> None:
        self.log.append(("sync", "tool_call", call.name))

    def on_iteration_end(self, state: LoopState) -> None:
        self.log.append(("sync", "iteration_end", state.iteration))


@tool(effect="read")
def broken() -> str:
    """Always fails."""
    raise ValueError("disk on fire")


async def test_six_hooks_fire_in_loop_order_with_loop_state() -> None:
    """Invariant: per iteration the hooks fire start → model_response → (tool_call → tool_result)* → end,
    with LoopState(iteration 1-based, max_iterations, run_id of the run being driven)."""
    log: Log = []
    agent = Agent(
        ScriptedModel([call("lookup", {"key": "k"}), answer("done")]),
        tools=[lookup],
        hooks=Recorder("a", log),
        max_iterations=7,
    )
    response = await agent.prompt("go")
    steps = [(point, value) for _, point, value in log]
    first, second = LoopState(1, 7, response.run_id), LoopState(2, 7, response.run_id)
    assert steps == [
        ("iteration_start", first),
        ("model_response", ["lookup"]),
        ("tool_call", "lookup"),
        ("tool_result", ("c1", "value of k", False)),
        ("iteration_end", first),
        ("iteration_start", second),
        ("model_response", "done"),
        ("iteration_end", second),
    ]
    # The hooks observed the run the journal recorded, step for step.
    assert [p.step for p in await payloads(agent, response.run_id, "model_called")] == [1, 2]


async def test_several_hooks_compose_sync_and_async_in_registration_order() -> None:
    """Invariant: several hooks, sync and async mixed, each run at every point, in the order given."""
    log: Log = []
    agent = Agent(
        ScriptedModel([call("lookup", {"key": "k"}), answer("done")]),
        tools=[lookup],
        hooks=[Recorder("a", log), SyncRecorder(log), Recorder("b", log)],
    )
    await agent.prompt("go")
    starts = [
        (tag, value if tag == "sync" else value.iteration) for tag, point, value in log if point == "iteration_start"
    ]
    assert starts == [("a", 1), ("sync", 1), ("b", 1), ("a", 2), ("sync", 2), ("b", 2)]
    tool_calls = [tag for tag, point, _ in log if point == "tool_call"]
    assert tool_calls == ["a", "sync", "b"]
    ends = [tag for tag, point, _ in log if point == "iteration_end"]
    assert ends == ["a", "sync", "b", "a", "sync", "b"]


async def test_on_error_fires_when_a_tool_raises_and_the_model_still_sees_the_error() -> None:
    """Invariant: a tool exception calls on_error and still becomes an error result the model reads;
    the run goes on (a tool's failure is never the run's end)."""
    log: Log = []
    model = ScriptedModel([call("broken"), answer("recovered")])
    agent = Agent(model, tools=[broken], hooks=Recorder("a", log))
    response = await agent.prompt("go")
    assert response.final_text == "recovered"
    errors = [value for _, point, value in log if point == "error"]
    assert errors == [repr(ValueError("disk on fire"))]
    # on_error fires between the tool call and its result.
    points = [point for _, point, _ in log]
    assert points.index("tool_call") < points.index("error") < points.index("tool_result")
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert completed.is_error and "disk on fire" in completed.output
    seen = model.requests[1].messages[-1]
    assert seen.role == "tool" and seen.is_error and "disk on fire" in seen.content


async def test_a_hook_that_raises_fails_the_run_and_is_journaled() -> None:
    """Invariant: an exception in a hook ends the run with run_failed (never a run that just stops)."""

    class Exploding(AgentHook):
        def on_model_response(self, response: ChatResponse) -> None:
            raise RuntimeError("hook bug")

    agent = Agent(ScriptedModel([answer("hi")]), hooks=Exploding())
    with pytest.raises(RunFailedError, match="hook bug") as info:
        await agent.prompt("go")
    assert (await types(agent, info.value.run_id or ""))[-1] == "run_failed"


async def test_on_tool_call_fires_once_per_call_even_when_retried() -> None:
    """Invariant: on_tool_call observes each call the model made once (Daimon: hooks, then execute
    with retry), so a metrics hook counting tool calls does not count retries."""
    attempts: list[int] = []

    @tool(effect="read")
    def flaky() -> str:
        """Fails once."""
        attempts.append(1)
        if len(attempts) < 2:
            raise ConnectionError("blip")
        return "ok"

    log: Log = []
    agent = Agent(
        ScriptedModel([call("flaky"), answer("done")]),
        tools=[flaky],
        hooks=Recorder("a", log),
        tool_retry_policy=ToolRetryPolicy.fixed(3, 0.0),
    )
    await agent.prompt("go")
    assert len(attempts) == 2
    assert [point for _, point, _ in log].count("tool_call") == 1
    assert [point for _, point, _ in log].count("error") == 1


async def test_a_hook_raising_on_tool_call_fails_the_run_before_any_tool_runs() -> None:
    """Invariant: on_tool_call runs before any call of the batch executes, so a hook that raises there
    fails the run (run_failed) with no tool executed and no completion journaled."""
    ran: list[str] = []

    @tool(effect="read")
    def first() -> str:
        """First."""
        ran.append("first")
        return "1"

    @tool(effect="read")
    def second() -> str:
        """Second."""
        ran.append("second")
        return "2"

    class Veto(AgentHook):
        def on_tool_call(self, call: ToolCall) -> None:
            if call.name == "second":
                raise RuntimeError("veto")

    model = ScriptedModel(
        [Message.assistant(tool_calls=[ToolCall("a", "first", {}), ToolCall("b", "second", {})]), answer("x")]
    )
    agent = Agent(model, tools=[first, second], hooks=Veto())
    with pytest.raises(RunFailedError, match="veto") as info:
        await agent.prompt("go")
    assert ran == []
    run_types = await types(agent, info.value.run_id or "")
    assert "tool_completed" not in run_types and run_types[-1] == "run_failed"
