"""The order each tool call goes through: middleware `on_tool_call` (on the decoded
arguments, which it may repair), schema validation, the approval policy, hooks `on_tool_call`
(on the validated arguments), execution."""

from __future__ import annotations

from _in_loop_support import answer, call, payloads

from eudaimon import Agent, ToolCall, tool
from eudaimon.hooks import AgentHook
from eudaimon.middleware import Middleware, ToolCallRequest
from eudaimon.models import ScriptedModel


def _agent(order: list[str], middleware: list[object]) -> Agent:
    @tool(effect="read")
    def add(a: int, b: int) -> str:
        """Add two integers."""
        order.append("execute")
        return str(a + b)

    class Seen(AgentHook):
        def on_tool_call(self, call: ToolCall) -> None:
            order.append(f"hook {call.arguments!r}")

    model = ScriptedModel([call("add", {"a": "2", "b": 3}), answer("done")])
    return Agent(model, tools=[add], hooks=[Seen()], middleware=middleware)


async def test_middleware_may_repair_arguments_before_they_are_validated() -> None:
    """Bug: schema validation ran before middleware `on_tool_call`, so a middleware that repairs
    arguments (here a string "2" for an integer) never got the chance. Now the repaired call is
    validated and runs: middleware, validation, hook (seeing the repaired call), execution."""
    order: list[str] = []

    class Repair(Middleware):
        def on_tool_call(self, call: ToolCallRequest) -> None:
            order.append("middleware")
            assert isinstance(call.arguments, dict)
            call.arguments["a"] = int(call.arguments["a"])

    agent = _agent(order, [Repair()])
    response = await agent.prompt("add them")
    assert order == ["middleware", "hook {'a': 2, 'b': 3}", "execute"]
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert (completed.output, completed.is_error) == ("5", False)


async def test_calls_that_fail_validation_reach_no_hook() -> None:
    """Invariant: hooks see calls as the tool would get them; a call whose arguments fail
    validation never reaches a hook: the model gets an error result, before any intent, and
    nothing runs."""
    order: list[str] = []
    agent = _agent(order, [])
    response = await agent.prompt("add them")
    assert order == []
    assert await payloads(agent, response.run_id, "tool_started") == []
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert completed.is_error and "do not match the schema" in completed.output
