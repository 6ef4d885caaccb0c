"""A tool error is shown to the model, never crashes a run; siblings still run, in call order."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.messages import Role
from eudaimon.errors import ConfigurationError
from eudaimon.models import ScriptedModel


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(effect="read")
def fail(message: str) -> str:
    """Raise an error."""
    raise ValueError(message)


class Order(BaseModel):
    sku: str
    quantity: int = 1


@tool(effect="read")
async def price(order: Order) -> dict[str, object]:
    """Price an order."""
    return {"sku": order.sku, "total": 3 * order.quantity}


async def _results(*calls: ToolCall) -> list[Message]:
    model = ScriptedModel([Message.assistant(tool_calls=list(calls)), "ok"])
    response = await Agent(model, tools=[add, fail, price]).prompt("go")
    assert response.status == "completed"
    return [m for m in response.messages if m.role is Role.TOOL]


async def test_every_kind_of_bad_call_becomes_an_error_result() -> None:
    """Invariant: unknown tool, invalid JSON, schema violation and an exception each give an
    is_error result naming the problem, and the good sibling call still succeeds."""
    results = await _results(
        ToolCall("1", "nope", {}),
        ToolCall("2", "add", '{"a": 1,'),
        ToolCall("3", "add", {"a": "one", "b": 2}),
        ToolCall("4", "fail", {"message": "kaput"}),
        ToolCall("5", "add", '{"a": 1, "b": 2}'),
        ToolCall("6", "price", {"order": {"sku": "x", "quantity": 2}}),
    )
    assert [m.tool_call_id for m in results] == ["1", "2", "3", "4", "5", "6"]
    assert [m.is_error for m in results] == [True, True, True, True, False, False]
    assert "Unknown tool 'nope'" in results[0].content and "add" in results[0].content
    assert "not valid JSON" in results[1].content
    assert "a: Input should be a valid integer (got 'one')" in results[2].content
    assert results[3].content == "ValueError: kaput"
    assert results[4].content == "3"
    assert results[5].content == '{"sku": "x", "total": 6}'


async def test_calls_of_one_turn_run_concurrently_and_keep_call_order() -> None:
    """Invariant: the calls of one model turn run at the same time; results follow call order."""
    first_started = asyncio.Event()
    order: list[str] = []

    @tool(effect="read")
    async def slow() -> str:
        """Waits for its sibling to start, which only happens if both run at once."""
        first_started.set()
        await asyncio.sleep(0)
        order.append("slow")
        return "slow"

    @tool(effect="read")
    async def fast() -> str:
        """Finishes once the slow call is running."""
        await asyncio.wait_for(first_started.wait(), timeout=5)
        order.append("fast")
        return "fast"

    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("a", "fast", {}), ToolCall("b", "slow", {})]), "ok"])
    response = await Agent(model, tools=[fast, slow]).prompt("go")
    tool_messages = [m.content for m in response.messages if m.role is Role.TOOL]
    assert tool_messages == ["fast", "slow"]
    assert order == ["slow", "fast"]


def test_duplicate_tool_names_are_refused_at_build() -> None:
    """Invariant: two tools with one name is a build error, not a runtime surprise."""
    with pytest.raises(ConfigurationError, match="'add'"):
        Agent(ScriptedModel([]), tools=[add, tool(name="add")(fail.function)])


async def test_validation_can_be_turned_off() -> None:
    """Invariant: validate_tool_inputs=False skips the JSON Schema check (pydantic still binds)."""
    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("1", "add", {"a": "2", "b": 3})]), "ok"])
    strict = await Agent(model, tools=[add]).prompt("go")
    assert [m.is_error for m in strict.messages if m.role is Role.TOOL] == [True]
    model = ScriptedModel([Message.assistant(tool_calls=[ToolCall("1", "add", {"a": "2", "b": 3})]), "ok"])
    lax = await Agent(model, tools=[add], validate_tool_inputs=False).prompt("go")
    assert [m.content for m in lax.messages if m.role is Role.TOOL] == ["5"]
