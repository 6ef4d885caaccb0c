"""Human input: the `ask_human` tool, through which a model asks a person a question mid-run.

The Agent turns a `HumanInputHandler` into a tool with `ask_human_tool(handler)`: named
`ask_human`, its schema is `ASK_HUMAN_SCHEMA` and its body `answer(handler, arguments)`. The
answer is the tool's result; like any tool result, it is journaled, so a resumed run does not
ask again. Its effect is READ: asking again after a crash mid-question is harmless.

For approvals that may wait for days, prefer tools that require approval (the run pauses
durably); `ask_human` holds the run open while the handler waits.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from eudaimon.core.effects import Effect
from eudaimon.core.errors import ConfigurationError
from eudaimon.tools import Tool, ToolArgumentsError

__all__ = [
    "ASK_HUMAN_DESCRIPTION",
    "ASK_HUMAN_NAME",
    "ASK_HUMAN_SCHEMA",
    "HumanInputHandler",
    "HumanInputRequest",
    "answer",
    "ask_human_tool",
]


@dataclass(frozen=True, slots=True)
class HumanInputRequest:
    """A question from the model to a person."""

    prompt: str
    """The question."""
    choices: tuple[str, ...] = ()
    """Suggested answers, if the model offered some; the person may still answer freely."""
    context: str | None = None
    """Why the model asks, or what it knows so far."""


@runtime_checkable
class HumanInputHandler(Protocol):
    """Gets a person's answer to a `HumanInputRequest`: from a console, a chat, a ticket…

    `request_input` may be `def` or `async def`; what it returns is given to the model as is.
    An exception it raises becomes an error result for the model.
    """

    def request_input(self, request: HumanInputRequest) -> Any: ...


ASK_HUMAN_NAME: Final = "ask_human"

ASK_HUMAN_DESCRIPTION: Final = (
    "Ask a human a question and wait for the answer. Use it when you need a clarification, "
    "a decision or information that only a person can give. Offer `choices` when the answer "
    "should be one of a few options; add `context` to explain why you ask."
)

ASK_HUMAN_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The question to ask."},
        "choices": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Suggested answers, if any.",
        },
        "context": {"type": "string", "description": "Why you ask, or what you know so far."},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}


def _request(arguments: Mapping[str, Any]) -> HumanInputRequest:
    """The request `arguments` describe; the error names what is wrong, for the model to fix."""
    prompt = arguments.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ToolArgumentsError("ask_human needs a non-empty string `prompt`")
    choices = arguments.get("choices") or ()
    if not isinstance(choices, list | tuple) or not all(isinstance(c, str) for c in choices):
        raise ToolArgumentsError("ask_human's `choices` must be a list of strings")
    context = arguments.get("context")
    if context is not None and not isinstance(context, str):
        raise ToolArgumentsError("ask_human's `context` must be a string")
    return HumanInputRequest(prompt, tuple(choices), context)


async def answer(handler: HumanInputHandler, arguments: Mapping[str, Any]) -> str:
    """Ask `handler` the question in the `ask_human` tool's `arguments`; return the human's answer.

    Raises:
        ToolArgumentsError: (a ValueError) the arguments do not match `ASK_HUMAN_SCHEMA`.
        TypeError: the handler answered something other than a string.
    """
    request = _request(arguments)
    result = handler.request_input(request)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, str):
        raise TypeError(f"{type(handler).__name__}.request_input returned {type(result).__name__}, not a string")
    return result


def ask_human_tool(handler: HumanInputHandler) -> Tool:
    """The `ask_human` tool answering through `handler`, for `Agent(human_input=handler)`.

    Raises:
        ConfigurationError: `handler` has no `request_input` method.
    """
    if not callable(getattr(handler, "request_input", None)):
        raise ConfigurationError(
            f"human_input {handler!r} has no request_input(request) method; see eudaimon.hitl.HumanInputHandler"
        )

    async def ask_human(**arguments: Any) -> str:
        return await answer(handler, arguments)

    return Tool(
        name=ASK_HUMAN_NAME,
        description=ASK_HUMAN_DESCRIPTION,
        parameters=copy.deepcopy(ASK_HUMAN_SCHEMA),
        function=ask_human,
        effect=Effect.READ,
        requires_approval=False,
        is_async=True,
    )
