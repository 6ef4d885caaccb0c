"""Human input: the ask_human tool's schema and answer, with sync and async handlers."""

from __future__ import annotations

import jsonschema
import pytest

from eudaimon.core.effects import Effect
from eudaimon.core.errors import ConfigurationError
from eudaimon.hitl import (
    ASK_HUMAN_DESCRIPTION,
    ASK_HUMAN_SCHEMA,
    HumanInputHandler,
    HumanInputRequest,
    answer,
    ask_human_tool,
)
from eudaimon.tools import ToolArgumentsError, ToolContext


class Console:
    """A sync handler that answers from a script and records the requests."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[HumanInputRequest] = []

    def request_input(self, request: HumanInputRequest) -> str:
        self.requests.append(request)
        return self.reply


class AsyncChat:
    async def request_input(self, request: HumanInputRequest) -> str:
        return f"picked {request.choices[0]}"


def test_schema_is_valid_and_requires_prompt() -> None:
    """ASK_HUMAN_SCHEMA is a valid JSON Schema: prompt required, choices strings, context a string."""
    jsonschema.Draft202012Validator.check_schema(ASK_HUMAN_SCHEMA)
    validator = jsonschema.Draft202012Validator(ASK_HUMAN_SCHEMA)
    assert validator.is_valid({"prompt": "Which?", "choices": ["a", "b"], "context": "why"})
    assert not validator.is_valid({"choices": ["a"]})
    assert not validator.is_valid({"prompt": "x", "choices": [1]})
    assert ASK_HUMAN_DESCRIPTION


async def test_answer_builds_the_request_and_returns_the_reply() -> None:
    """answer() turns the tool arguments into a HumanInputRequest and returns the human's reply."""
    handler = Console("blue")
    assert isinstance(handler, HumanInputHandler)
    reply = await answer(handler, {"prompt": "Favourite colour?", "choices": ["red", "blue"], "context": "theme"})
    assert reply == "blue"
    assert handler.requests == [HumanInputRequest("Favourite colour?", ("red", "blue"), "theme")]


async def test_async_handlers_are_awaited() -> None:
    """An async handler's answer is awaited."""
    assert await answer(AsyncChat(), {"prompt": "Pick", "choices": ["x"]}) == "picked x"


async def test_bad_arguments_and_bad_answers_raise_clear_errors() -> None:
    """Wrong arguments raise ValueError (shown to the model); a non-string answer raises TypeError."""
    with pytest.raises(ValueError, match="prompt"):
        await answer(Console("x"), {"prompt": ""})
    with pytest.raises(ValueError, match="choices"):
        await answer(Console("x"), {"prompt": "q", "choices": "a,b"})
    with pytest.raises(TypeError, match="not a string"):
        await answer(Console(42), {"prompt": "q"})  # type: ignore[arg-type]


async def test_ask_human_tool_runs_through_the_real_tool_machinery() -> None:
    """ask_human_tool is a READ tool named ask_human whose schema rejects bad calls and whose body asks the handler."""
    handler = Console("yes")
    tool = ask_human_tool(handler).compiled()
    assert (tool.name, tool.effect, tool.needs_approval) == ("ask_human", Effect.READ, False)

    arguments = tool.parse_arguments('{"prompt": "Deploy now?", "choices": ["yes", "no"]}')
    reply = await tool.invoke(arguments, ToolContext("run", "call", "key"))

    assert reply == "yes"
    assert handler.requests == [HumanInputRequest("Deploy now?", ("yes", "no"))]
    with pytest.raises(ToolArgumentsError):
        tool.parse_arguments({"choices": ["yes"]})
    with pytest.raises(ConfigurationError, match="request_input"):
        ask_human_tool(object())  # type: ignore[arg-type]
