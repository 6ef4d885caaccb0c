"""Middleware: layers that may rewrite a model request, its response or a tool call, or answer
in their place.

Unlike hooks, middleware changes what happens. Each method of a layer may:

- mutate its argument in place (a `ChatRequest` and a `ChatResponse` are mutable; a tool call
  arrives as a mutable `ToolCallRequest`, because `ToolCall` is frozen), and return None or
  `MiddlewareAction.Continue` to let the next layer run;
- return `MiddlewareAction.ShortCircuit(value)` to stop the stack: on a request, `value` is the
  response to use instead of calling the model; on a response, it replaces the response; on a
  tool call, it is the tool's result and the tool is not run;
- from `on_tool_call` only, return a replacement `ToolCall` (its id is ignored: the call keeps
  the id the model gave it, so its result still matches).

Layers run in registration order and the first short-circuit stops the rest. The runtime
calls one `MiddlewareStack` at each point of the loop, before the effect is journaled, so what
the journal records is what the middleware let through:

    short = await stack.run_on_request(request)   # None: call the model with `request`
    response = await stack.run_on_response(response)
    outcome = await stack.run_on_tool_call(call)   # a ToolCall to run, or a ToolOutput
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import JsonObject, Message, ToolCall
from eudaimon.extensions._one_or_many import one_or_many
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.models.base import ChatRequest, ChatResponse

__all__ = [
    "Middleware",
    "MiddlewareAction",
    "MiddlewareResult",
    "MiddlewareStack",
    "ShortCircuit",
    "ToolCallRequest",
    "ToolOutput",
]


class _Continue:
    """The type of `MiddlewareAction.Continue`: a single value, like `None`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MiddlewareAction.Continue"


CONTINUE: Final = _Continue()

ShortCircuitValue = ChatResponse | Message | ToolOutput | str | tuple[str, bool]
"""A response (for requests and responses; a Message or str becomes an assistant answer), or a
tool result (for tool calls: a ToolOutput, a string, or `(content, is_error)`)."""


@dataclass(frozen=True, slots=True)
class ShortCircuit:
    """Stop the stack and use `value` instead of what would have come next."""

    value: ShortCircuitValue


MiddlewareResult = _Continue | ShortCircuit | None
"""What `on_request` and `on_response` return (sync), for annotating a layer's methods."""


class MiddlewareAction:
    """What a middleware method returns: `MiddlewareAction.Continue` (a value, not a class) or
    `MiddlewareAction.ShortCircuit(response_or_result)`. Returning None also means Continue."""

    Continue: Final = CONTINUE
    ShortCircuit = ShortCircuit


@dataclass(slots=True)
class ToolCallRequest:
    """A tool call a middleware layer may rewrite in place.

    `arguments` is a deep copy of the model's, so changing it never alters the journaled call.
    `id` identifies the call to the model; changing it has no effect.
    """

    id: str
    name: str
    arguments: JsonObject | str

    @classmethod
    def from_call(cls, call: ToolCall) -> ToolCallRequest:
        """A mutable copy of `call`."""
        return cls(call.id, call.name, copy.deepcopy(call.arguments))


class Middleware:
    """Base class of middleware layers. Override only what you need, with `def` or `async def`.

    Each method returns None, `MiddlewareAction.Continue` or `MiddlewareAction.ShortCircuit(...)`;
    `on_tool_call` may also return a replacement `ToolCall`. The defaults do nothing and are
    skipped by `MiddlewareStack` without being called.
    """

    def on_request(self, request: ChatRequest) -> Any:
        """Before the model is called: rewrite `request`, or short-circuit with a response."""

    def on_response(self, response: ChatResponse) -> Any:
        """After the model answered: rewrite `response`, or short-circuit with a replacement."""

    def on_tool_call(self, call: ToolCallRequest) -> Any:
        """Before a tool runs: rewrite `call`, return a new `ToolCall`, or short-circuit with its result.

        `call.arguments` is the model's arguments decoded (a dict, not the provider's JSON text),
        before schema validation, so a layer may repair them; the approval policy, hooks and
        the human then see what this returns, validated. A call whose text is not a JSON
        object never gets here: the model is told.
        """


_METHODS = ("on_request", "on_response", "on_tool_call")


def _layer_methods(layers: tuple[object, ...], name: str) -> tuple[tuple[str, Any], ...]:
    """(layer name, bound method) for each layer that overrides `name`."""
    found = []
    for layer in layers:
        own = getattr(type(layer), name, None)
        if own is not None and own is not getattr(Middleware, name):
            found.append((type(layer).__name__, getattr(layer, name)))
    return tuple(found)


async def _action(method: Any, arg: object) -> object:
    result = method(arg)
    if inspect.isawaitable(result):
        result = await result
    return result


def _bad_action(layer: str, method: str, returned: str, expected: str) -> ConfigurationError:
    return ConfigurationError(
        f"middleware {layer}.{method} returned {returned}; "
        f"return None, MiddlewareAction.Continue or MiddlewareAction.ShortCircuit({expected})"
    )


def _as_response(layer: str, method: str, value: object) -> ChatResponse:
    if isinstance(value, ChatResponse):
        return value
    if isinstance(value, str):
        value = Message.assistant(value)
    if isinstance(value, Message):
        return ChatResponse(value)
    raise _bad_action(layer, method, f"ShortCircuit({value!r})", "a ChatResponse")


def _as_tool_output(layer: str, value: object) -> ToolOutput:
    if isinstance(value, ToolOutput):
        return value
    if isinstance(value, str):
        return ToolOutput(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], bool):
        return ToolOutput(value[0], value[1])
    raise _bad_action(layer, "on_tool_call", f"ShortCircuit({value!r})", "content or (content, is_error)")


class MiddlewareStack:
    """Middleware layers run in registration order; the first short-circuit stops the rest.

    Args:
        layers: None, one layer, or a sequence of layers (`Middleware` subclasses, or any
            object with some of its methods). Another stack is flattened into this one.
    """

    __slots__ = ("_on_request", "_on_response", "_on_tool_call", "layers")

    layers: tuple[object, ...]
    """The layers, in the order they run."""

    def __init__(self, layers: object | Sequence[object] | None = None) -> None:
        items = layers.layers if isinstance(layers, MiddlewareStack) else one_or_many(layers)
        self.layers = items
        # Precomputed so that a loop without middleware for a point pays nothing there.
        self._on_request = _layer_methods(items, "on_request")
        self._on_response = _layer_methods(items, "on_response")
        self._on_tool_call = _layer_methods(items, "on_tool_call")

    def __bool__(self) -> bool:
        return bool(self._on_request or self._on_response or self._on_tool_call)

    def __len__(self) -> int:
        return len(self.layers)

    async def run_on_request(self, request: ChatRequest) -> ChatResponse | None:
        """Let each layer see (and rewrite) `request`.

        Returns:
            The response a layer short-circuited with (the model must not be called), or None:
            call the model with `request`, as the layers left it.

        Raises:
            ConfigurationError: a layer returned something that is not an action.
        """
        short = await self.short_circuit_request(request)
        return short[1] if short is not None else None

    async def short_circuit_request(self, request: ChatRequest) -> tuple[str, ChatResponse] | None:
        """`run_on_request`, naming the layer that short-circuited: the runtime journals that
        this layer, not a model, answered.

        Returns:
            (the layer's class name, its response), or None: call the model with `request`.
        """
        for layer, method in self._on_request:
            action = await _action(method, request)
            if action is None or action is CONTINUE:
                continue
            if isinstance(action, ShortCircuit):
                return layer, _as_response(layer, "on_request", action.value)
            raise _bad_action(layer, "on_request", repr(action), "response")
        return None

    async def run_on_response(self, response: ChatResponse) -> ChatResponse:
        """Let each layer see (and rewrite) `response`.

        Returns:
            The response to use: a short-circuit's replacement, or `response` as the layers
            left it.

        Raises:
            ConfigurationError: a layer returned something that is not an action.
        """
        for layer, method in self._on_response:
            action = await _action(method, response)
            if action is None or action is CONTINUE:
                continue
            if isinstance(action, ShortCircuit):
                return _as_response(layer, "on_response", action.value)
            raise _bad_action(layer, "on_response", repr(action), "response")
        return response

    async def run_on_tool_call(self, call: ToolCall) -> ToolCall | ToolOutput:
        """Let each layer see (and rewrite) a tool call before it runs.

        Returns:
            A `ToolOutput` when a layer short-circuited (do not run the tool; use this as its
            result), else the `ToolCall` to run: `call` itself when no layer changed it, or a
            new call with the same id.

        Raises:
            ConfigurationError: a layer returned something that is not an action.
        """
        if not self._on_tool_call:
            return call
        request = ToolCallRequest.from_call(call)
        for layer, method in self._on_tool_call:
            action = await _action(method, request)
            if action is None or action is CONTINUE:
                continue
            if isinstance(action, ShortCircuit):
                return _as_tool_output(layer, action.value)
            if isinstance(action, ToolCall):
                request = ToolCallRequest.from_call(action)
                continue
            raise _bad_action(layer, "on_tool_call", repr(action), "result")
        if request.name == call.name and request.arguments == call.arguments:
            return call
        return ToolCall(call.id, request.name, request.arguments)

    def __repr__(self) -> str:
        return f"MiddlewareStack({[type(layer).__name__ for layer in self.layers]!r})"
