"""The order each tool call goes through, as in the reference: middleware `on_tool_call`,
hooks `on_tool_call`, schema validation, execution."""

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
    validated and runs: middleware, hook (seeing the repaired call), validation, execution."""
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


async def test_hooks_see_calls_that_then_fail_validation() -> None:
    """Bug: hooks never saw a call whose arguments failed validation. Now `on_tool_call` sees it;
    validation then answers the model with an error result, before any intent: nothing runs."""
    order: list[str] = []
    agent = _agent(order, [])
    response = await agent.prompt("add them")
    assert order == ["hook {'a': '2', 'b': 3}"]
    assert await payloads(agent, response.run_id, "tool_started") == []
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert completed.is_error and "do not match the schema" in completed.output
