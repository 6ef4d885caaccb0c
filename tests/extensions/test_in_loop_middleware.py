"""Middleware inside the one loop: what the layers let through is what the model sees and the
journal records; short-circuits replace effects and are journaled like real ones."""

from __future__ import annotations

from typing import Any

from _in_loop_support import answer, call, payloads, types

from eudaimon import Agent, Message, tool
from eudaimon.middleware import Middleware, MiddlewareAction, ToolCallRequest
from eudaimon.models import ChatRequest, ChatResponse, ScriptedModel

_runs: list[str] = []


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    _runs.append(key)
    return f"value-of-{key}"


class Tagging(Middleware):
    """Records the order in which layers see each point."""

    def __init__(self, tag: str, log: list[tuple[str, str]]) -> None:
        self.tag, self.log = tag, log

    def on_request(self, request: ChatRequest) -> Any:
        self.log.append((self.tag, "request"))
        return MiddlewareAction.Continue

    async def on_response(self, response: ChatResponse) -> Any:
        self.log.append((self.tag, "response"))
        return None

    def on_tool_call(self, call: ToolCallRequest) -> Any:
        self.log.append((self.tag, "tool_call"))
        return MiddlewareAction.Continue


async def test_layers_run_in_registration_order_at_every_point() -> None:
    """Invariant: layers run in the order they were registered, for requests, responses and tool calls."""
    log: list[tuple[str, str]] = []
    agent = Agent(
        ScriptedModel([call("lookup", {"key": "k"}), answer("done")]),
        tools=[lookup],
        middleware=[Tagging("first", log), Tagging("second", log)],
    )
    await agent.prompt("go")
    assert log == [
        ("first", "request"),
        ("second", "request"),
        ("first", "response"),
        ("second", "response"),
        ("first", "tool_call"),
        ("second", "tool_call"),
        ("first", "request"),
        ("second", "request"),
        ("first", "response"),
        ("second", "response"),
    ]


async def test_on_request_mutation_reaches_the_model_but_not_the_run_history() -> None:
    """Invariant: a layer that injects a message changes what the model is sent; the journaled
    conversation stays the run's own (the injection is re-applied on every request)."""

    class Inject(Middleware):
        def on_request(self, request: ChatRequest) -> None:
            request.messages.insert(1, Message.system("The user is a premium subscriber."))

    model = ScriptedModel([answer("hello premium user")])
    agent = Agent(model, system_prompt="Be nice.", middleware=Inject())
    response = await agent.prompt("hi")
    sent = [(m.role, m.content) for m in model.requests[0].messages]
    assert sent == [("system", "Be nice."), ("system", "The user is a premium subscriber."), ("user", "hi")]
    state = await agent.state(response.run_id)
    assert "premium subscriber" not in " ".join(m.content for m in state.messages)


async def test_request_short_circuit_skips_the_model_and_is_journaled_as_model_called() -> None:
    """Invariant: on a request short-circuit the model is not called (no attempt is journaled), the
    given response is journaled as model_called, and later layers do not run."""
    log: list[tuple[str, str]] = []

    class Cache(Middleware):
        def on_request(self, request: ChatRequest) -> Any:
            log.append(("cache", "request"))
            return MiddlewareAction.ShortCircuit(ChatResponse(Message.assistant("cached answer")))

    model = ScriptedModel([])  # any model call would fail: the script is empty
    agent = Agent(model, middleware=[Cache(), Tagging("after", log)])
    response = await agent.prompt("hi")
    assert response.final_text == "cached answer" and response.iterations == 1
    assert model.requests == []
    assert ("after", "request") not in log
    run_types = await types(agent, response.run_id)
    assert "model_attempt_started" not in run_types
    assert run_types == ["run_started", "model_called", "run_completed"]
    (called,) = await payloads(agent, response.run_id, "model_called")
    assert called.message.content == "cached answer"


async def test_on_response_mutation_and_replacement_are_what_the_journal_records() -> None:
    """Invariant: a response rewritten in place, or replaced by a short-circuit, is the response the
    run continues with and the one model_called records; the original text leaves no trace."""

    class Rewrite(Middleware):
        def on_response(self, response: ChatResponse) -> None:
            response.message = Message.assistant(response.text().upper())

    agent = Agent(ScriptedModel([answer("quiet words")]), middleware=Rewrite())
    response = await agent.prompt("hi")
    assert response.final_text == "QUIET WORDS"
    (called,) = await payloads(agent, response.run_id, "model_called")
    assert called.message.content == "QUIET WORDS"

    class Replace(Middleware):
        def on_response(self, response: ChatResponse) -> Any:
            return MiddlewareAction.ShortCircuit("replaced")

    log: list[tuple[str, str]] = []
    agent = Agent(ScriptedModel([answer("original")]), middleware=[Replace(), Tagging("after", log)])
    response = await agent.prompt("hi")
    assert response.final_text == "replaced"
    assert ("after", "response") not in log
    (called,) = await payloads(agent, response.run_id, "model_called")
    assert called.message.content == "replaced"
    state = await agent.state(response.run_id)
    assert all(m.content != "original" for m in state.messages)


async def test_tool_call_short_circuit_does_not_run_the_tool_and_journals_the_result() -> None:
    """Invariant: a tool-call short-circuit means the tool does not run (no tool_started intent, since
    nothing happens in the world), the given result is journaled as tool_completed and shown to the
    model, and later layers do not see the call."""
    log: list[tuple[str, str]] = []
    _runs.clear()

    class Deny(Middleware):
        def on_tool_call(self, call: ToolCallRequest) -> Any:
            return MiddlewareAction.ShortCircuit(("not today", True))

    model = ScriptedModel([call("lookup", {"key": "k"}), answer("ok")])
    agent = Agent(model, tools=[lookup], middleware=[Deny(), Tagging("after", log)])
    response = await agent.prompt("go")
    assert _runs == []
    assert ("after", "tool_call") not in log
    run_types = await types(agent, response.run_id)
    assert "tool_started" not in run_types
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert (completed.call_id, completed.output, completed.is_error) == ("c1", "not today", True)
    seen = model.requests[1].messages[-1]
    assert (seen.role, seen.content, seen.is_error) == ("tool", "not today", True)


async def test_tool_call_rewrite_runs_the_tool_with_the_new_arguments() -> None:
    """Invariant: a layer rewriting a call's arguments changes what the tool runs with; the call keeps
    its id, so its result still answers the model's call."""
    _runs.clear()

    class Normalize(Middleware):
        def on_tool_call(self, call: ToolCallRequest) -> None:
            assert isinstance(call.arguments, dict)
            call.arguments["key"] = call.arguments["key"].lower()

    agent = Agent(
        ScriptedModel([call("lookup", {"key": "LOUD"}), answer("ok")]), tools=[lookup], middleware=Normalize()
    )
    response = await agent.prompt("go")
    assert _runs == ["loud"]
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert (completed.call_id, completed.output) == ("c1", "value-of-loud")


async def test_reroute_to_another_tool_runs_it_but_cannot_escape_the_checks() -> None:
    """Invariant: a layer may reroute a call to another tool, which then runs under its own name and
    checks; a reroute that would dodge approval (to a tool the policy would not simply allow) or make
    a re-runnable call unsafe to re-run after a crash is refused as an error result, and nothing runs."""
    wiped: list[str] = []

    @tool(effect="read")
    def safe_lookup(key: str) -> str:
        """A safer lookup."""
        return f"safe-{key}"

    @tool(effect="irreversible")
    def wipe(key: str) -> str:
        """Wipes a key."""
        wiped.append(key)
        return "wiped"

    class Reroute(Middleware):
        def __init__(self, target: str) -> None:
            self.target = target

        def on_tool_call(self, call: ToolCallRequest) -> None:
            call.name = self.target

    agent = Agent(
        ScriptedModel([call("lookup", {"key": "k"}), answer("ok")]),
        tools=[lookup, safe_lookup, wipe],
        middleware=Reroute("safe_lookup"),
    )
    response = await agent.prompt("go")
    (started,) = await payloads(agent, response.run_id, "tool_started")
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert (started.tool, completed.tool, completed.output) == ("safe_lookup", "safe_lookup", "safe-k")

    for target in ("wipe", "missing"):
        agent = Agent(
            ScriptedModel([call("lookup", {"key": "k"}), answer("ok")]),
            tools=[lookup, safe_lookup, wipe],
            middleware=Reroute(target),
        )
        response = await agent.prompt("go")
        assert "tool_started" not in await types(agent, response.run_id)
        (completed,) = await payloads(agent, response.run_id, "tool_completed")
        assert completed.is_error and target in completed.output
    assert wiped == []
