"""Middleware: layers run in order, may mutate, and the first short-circuit stops the rest."""

from __future__ import annotations

import pytest

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Message, ToolCall
from eudaimon.middleware import (
    Middleware,
    MiddlewareAction,
    MiddlewareResult,
    MiddlewareStack,
    ShortCircuit,
    ToolCallRequest,
    ToolOutput,
)
from eudaimon.models.base import ChatRequest, ChatResponse, StopReason


class Tag(Middleware):
    """Appends its tag to the request, the response and the tool arguments; never stops."""

    def __init__(self, tag: str, log: list[str]) -> None:
        self.tag = tag
        self.log = log

    async def on_request(self, request: ChatRequest) -> None:
        self.log.append(f"{self.tag}:request")
        request.messages.append(Message.system(self.tag))

    def on_response(self, response: ChatResponse) -> MiddlewareResult:  # sync on purpose
        self.log.append(f"{self.tag}:response")
        response.message = Message.assistant(response.text() + self.tag)
        return MiddlewareAction.Continue

    async def on_tool_call(self, call: ToolCallRequest) -> None:
        self.log.append(f"{self.tag}:tool")
        assert isinstance(call.arguments, dict)
        call.arguments.setdefault("tags", []).append(self.tag)


class Stop(Middleware):
    """Short-circuits everything with fixed answers."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def on_request(self, request: ChatRequest) -> ShortCircuit:
        self.log.append("stop:request")
        return MiddlewareAction.ShortCircuit(ChatResponse(Message.assistant("rate limited"), StopReason.END_TURN))

    async def on_response(self, response: ChatResponse) -> ShortCircuit:
        self.log.append("stop:response")
        return MiddlewareAction.ShortCircuit("replaced")

    async def on_tool_call(self, call: ToolCallRequest) -> ShortCircuit:
        self.log.append("stop:tool")
        return MiddlewareAction.ShortCircuit(("cached result", False))


def request() -> ChatRequest:
    return ChatRequest(messages=[Message.user("hi")])


async def test_layers_run_in_registration_order_and_mutate_in_place() -> None:
    """Each layer sees the request as the previous ones left it; no short-circuit means None."""
    log: list[str] = []
    stack = MiddlewareStack([Tag("a", log), Tag("b", log)])
    req = request()

    assert await stack.run_on_request(req) is None
    assert [m.content for m in req.messages] == ["hi", "a", "b"]

    response = await stack.run_on_response(ChatResponse(Message.assistant("x")))
    assert response.text() == "xab"
    assert log == ["a:request", "b:request", "a:response", "b:response"]


async def test_first_short_circuit_on_request_stops_the_rest() -> None:
    """A short-circuit returns its response and later layers never see the request."""
    log: list[str] = []
    stack = MiddlewareStack([Tag("a", log), Stop(log), Tag("c", log)])

    short = await stack.run_on_request(request())

    assert short is not None
    assert short.text() == "rate limited"
    assert log == ["a:request", "stop:request"]


async def test_short_circuit_on_response_replaces_it() -> None:
    """On a response, a short-circuit (a string becomes an assistant answer) replaces the response."""
    log: list[str] = []
    stack = MiddlewareStack([Stop(log), Tag("b", log)])
    original = ChatResponse(Message.assistant("model said"))

    response = await stack.run_on_response(original)

    assert response is not original
    assert response.text() == "replaced"
    assert response.message.role == "assistant"
    assert log == ["stop:response"]


async def test_tool_call_mutation_never_touches_the_original_call() -> None:
    """A layer rewrites a copy: the model's frozen ToolCall (shared with the journal) is unchanged."""
    log: list[str] = []
    original = ToolCall("call-1", "search", {"q": "x"})
    stack = MiddlewareStack([Tag("a", log), Tag("b", log)])

    outcome = await stack.run_on_tool_call(original)

    assert isinstance(outcome, ToolCall)
    assert outcome == ToolCall("call-1", "search", {"q": "x", "tags": ["a", "b"]})
    assert original.arguments == {"q": "x"}


async def test_tool_call_short_circuit_gives_the_result_and_stops() -> None:
    """A short-circuit on a tool call is the tool's result; later layers do not run."""
    log: list[str] = []
    stack = MiddlewareStack([Stop(log), Tag("b", log)])

    outcome = await stack.run_on_tool_call(ToolCall("c", "search", {}))

    assert outcome == ToolOutput("cached result", is_error=False)
    assert log == ["stop:tool"]


async def test_tool_call_replacement_keeps_the_model_call_id() -> None:
    """A layer may return a new ToolCall; the call keeps the id the model gave it."""

    class Reroute(Middleware):
        def on_tool_call(self, call: ToolCallRequest) -> ToolCall:
            return ToolCall("other-id", "safe_search", {"q": "y"})

    outcome = await MiddlewareStack(Reroute()).run_on_tool_call(ToolCall("c1", "search", {"q": "x"}))

    assert outcome == ToolCall("c1", "safe_search", {"q": "y"})


async def test_unchanged_tool_call_is_returned_as_is() -> None:
    """Without layers, or when no layer changes it, the same ToolCall object comes back."""
    call = ToolCall("c", "t", {"a": 1})

    class Look(Middleware):
        def on_tool_call(self, call: ToolCallRequest) -> None:
            return None

    assert await MiddlewareStack().run_on_tool_call(call) is call
    assert await MiddlewareStack(Look()).run_on_tool_call(call) is call


async def test_short_circuit_variants_for_tool_results() -> None:
    """A tool short-circuit may be a string, (content, is_error) or a ToolOutput."""
    for value, expected in [
        ("ok", ToolOutput("ok")),
        (("bad", True), ToolOutput("bad", True)),
        (ToolOutput("x", True), ToolOutput("x", True)),
    ]:

        class Short(Middleware):
            def on_tool_call(self, call: ToolCallRequest, value: object = value) -> ShortCircuit:
                return MiddlewareAction.ShortCircuit(value)  # type: ignore[arg-type]

        assert await MiddlewareStack(Short()).run_on_tool_call(ToolCall("c", "t")) == expected


async def test_wrong_return_values_are_errors_not_silent_continues() -> None:
    """A layer returning something that is not an action raises, naming the layer."""

    class Confused(Middleware):
        def on_request(self, request: ChatRequest) -> str:
            return "continue"

        def on_tool_call(self, call: ToolCallRequest) -> ShortCircuit:
            return MiddlewareAction.ShortCircuit(ChatResponse(Message.assistant("no")))

    stack = MiddlewareStack(Confused())
    with pytest.raises(ConfigurationError, match=r"Confused\.on_request"):
        await stack.run_on_request(request())
    with pytest.raises(ConfigurationError, match=r"Confused\.on_tool_call"):
        await stack.run_on_tool_call(ToolCall("c", "t"))


def test_continue_is_a_value_and_empty_stacks_are_falsy() -> None:
    """`MiddlewareAction.Continue` is one value (not a class); a stack with no overrides is falsy."""
    assert MiddlewareAction.Continue is MiddlewareAction.Continue
    assert not isinstance(MiddlewareAction.Continue, type)
    assert repr(MiddlewareAction.Continue) == "MiddlewareAction.Continue"
    assert not MiddlewareStack()
    assert not MiddlewareStack([Middleware()])
    assert MiddlewareStack(Tag("a", []))
    assert MiddlewareAction.ShortCircuit("x") == ShortCircuit("x")


def test_a_stack_takes_none_one_layer_a_sequence_or_another_stack() -> None:
    """Invariant: `MiddlewareStack(x)` reads `x` as hooks read theirs (`one_or_many`): None is no
    layer, a list or tuple its layers in order, another stack its layers (flattened, not nested),
    anything else one layer."""
    a, b = Tag("a", []), Tag("b", [])
    assert MiddlewareStack(None).layers == ()
    assert MiddlewareStack(a).layers == (a,)
    assert MiddlewareStack([a, b]).layers == (a, b)
    assert MiddlewareStack((b, a)).layers == (b, a)
    assert MiddlewareStack(MiddlewareStack([a, b])).layers == (a, b)
