"""Every extension point sees a call's arguments as the tool will get them, from real providers.

Providers send tool arguments as JSON text (OpenAI, whole or split across stream chunks;
Anthropic's streams as `partial_json` pieces). Before: `ToolCall.arguments` reached the
approval policy as that raw text, so the policy of docs/concepts/approvals.md ("refunds over
$100 need a human") read the amount as 0 and a $550 refund ran with nobody asked.

Here the fake provider servers of `_fake_providers.py` speak the wire formats through the official
SDKs: middleware `on_tool_call` sees the decoded dict; the approval policy, the human
(`approval_requested`, `pending_approvals`), hooks `on_tool_call` / `on_tool_result` and the
`tool_started` intent see the validated dict; `model_called` keeps the model's text as sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _fake_providers import FakeAnthropic, FakeOpenAI, Received, Reply

from eudaimon import Agent, Tool, ToolCall, ToolPolicy, tool
from eudaimon.core.events import ApprovalRequested, ModelCalled, ToolStarted
from eudaimon.hooks import AgentHook
from eudaimon.middleware import Middleware, ToolCallRequest
from eudaimon.stores import MemoryStore

PIECES = ['{"order": "A-', '7", "amou', 'nt_usd": 550}']
"""The refund's arguments as a provider streams them: JSON text in pieces."""


class Seen:
    """What each extension point was given, by name."""

    def __init__(self) -> None:
        self.calls: dict[str, list[Any]] = {}

    def saw(self, where: str, arguments: Any) -> None:
        self.calls.setdefault(where, []).append(arguments)


def provider_name(server: Any) -> str:
    return "openai" if hasattr(server, "completion") else "anthropic"


def _agent(model: Any, seen: Seen, refunded: list[float]) -> Agent:
    @tool(effect="write", idempotent=True)
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        refunded.append(amount_usd)
        return f"refunded ${amount_usd:.2f} on {order}"

    def over_100_needs_a_human(call: ToolCall, tool: Tool) -> ToolPolicy:
        seen.saw("policy", call.arguments)
        assert isinstance(call.arguments, dict)
        return ToolPolicy.REQUIRE_APPROVAL if call.arguments["amount_usd"] > 100 else ToolPolicy.ALLOW

    class Watch(Middleware):
        def on_tool_call(self, request: ToolCallRequest) -> None:
            seen.saw("middleware", request.arguments)

    class Hook(AgentHook):
        def on_tool_call(self, call: ToolCall) -> None:
            seen.saw("hook", call.arguments)

        def on_tool_result(self, call: ToolCall, result: Any) -> None:
            seen.saw("hook result", call.arguments)

    return Agent(
        model,
        tools=[refund],
        approval_policy=over_100_needs_a_human,
        middleware=[Watch()],
        hooks=[Hook()],
        store=MemoryStore(),
    )


def _openai_call(server: FakeOpenAI, pieces: list[str], finish: str = "tool_calls") -> Any:
    """A reply with one refund call: whole JSON text, or streamed in `pieces`, as asked."""

    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            return server.completion(
                None, tool_calls=[server.tool_call("c1", "refund", "".join(pieces))], finish_reason=finish
            )
        first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "refund", "arguments": ""}}
        chunks = [server.chunk({"role": "assistant", "tool_calls": [first]})]
        chunks += [server.chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
        chunks.append(server.chunk({}, finish_reason=finish))
        return server.stream(chunks)

    return reply


def _openai_text(server: FakeOpenAI, text: str) -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            return server.completion(text)
        return server.stream(
            [server.chunk({"role": "assistant", "content": text}), server.chunk({}, finish_reason="stop")]
        )

    return reply


def _anthropic_call(server: FakeAnthropic, pieces: list[str], stop: str = "tool_use") -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            block = {"type": "tool_use", "id": "c1", "name": "refund", "input": json.loads("".join(pieces))}
            return server.message([block], stop_reason=stop)
        events = [server.message_start(), *server.tool_block(0, "c1", "refund", pieces), *server.message_end(stop)]
        return server.stream(events)

    return reply


def _anthropic_text(server: FakeAnthropic, text: str) -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            return server.message([{"type": "text", "text": text}])
        return server.stream([server.message_start(), *server.text_block(0, [text]), *server.message_end()])

    return reply


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest) -> tuple[Any, Any, Any, Any]:
    """(server, model, call reply, text reply) of one provider's fake."""
    if request.param == "openai":
        server = request.getfixturevalue("openai_server")
        return server, request.getfixturevalue("openai_model"), _openai_call, _openai_text
    server = request.getfixturevalue("anthropic_server")
    return server, request.getfixturevalue("anthropic_model"), _anthropic_call, _anthropic_text


async def _prompt(agent: Agent, text: str, streaming: bool) -> Any:
    if not streaming:
        return await agent.prompt(text)
    run_id = "run-streamed"
    async for _ in agent.prompt_stream(text, run_id=run_id):
        pass
    return await agent.state(run_id)


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_refund_over_the_limit_waits_for_a_human_from_a_real_provider(
    provider: tuple[Any, Any, Any, Any], streaming: bool
) -> None:
    """Invariant: the $550 refund's arguments reach middleware and the policy as a dict; the
    run waits for a human, shown the dict; nothing runs until approved; then hooks see the
    same dict and the tool runs with it."""
    server, model, call_reply, text_reply = provider
    seen, refunded = Seen(), []
    agent = _agent(model, seen, refunded)
    server.reply(call_reply(server, PIECES), text_reply(server, "Refunded."))

    paused = await _prompt(agent, "refund A-7", streaming)

    expected = {"order": "A-7", "amount_usd": 550}
    assert paused.status == "awaiting_approval" and refunded == []
    assert seen.calls == {"middleware": [expected], "policy": [expected]}
    [waiting] = (await agent.state(paused.run_id)).awaiting_approval()
    assert waiting.arguments == expected
    events = await agent.store.load(paused.run_id)
    [asked] = [e.data for e in events if isinstance(e.data, ApprovalRequested)]
    assert asked.arguments == expected
    [answered] = [e.data for e in events if isinstance(e.data, ModelCalled)]
    if provider_name(server) == "openai":  # the journal keeps the model's message as it was observed
        assert answered.message.tool_calls[0].arguments == "".join(PIECES)

    await agent.approve(paused.run_id, "c1", by="alice")
    done = await agent.resume(paused.run_id)

    assert done.status == "completed" and refunded == [550]
    assert seen.calls["hook"] == [expected] and seen.calls["hook result"] == [expected]
    [started] = [e.data for e in await agent.store.load(paused.run_id) if isinstance(e.data, ToolStarted)]
    assert started.arguments == expected


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_refund_under_the_limit_runs_at_once(provider: tuple[Any, Any, Any, Any], streaming: bool) -> None:
    """Invariant: a refund the policy allows runs with nobody asked; every point saw the dict."""
    server, model, call_reply, text_reply = provider
    seen, refunded = Seen(), []
    agent = _agent(model, seen, refunded)
    server.reply(call_reply(server, ['{"order": "A-8", ', '"amount_usd": 40}']), text_reply(server, "Refunded."))

    done = await _prompt(agent, "refund A-8", streaming)

    expected = {"order": "A-8", "amount_usd": 40}
    assert done.status == "completed" and refunded == [40]
    assert seen.calls == {"middleware": [expected], "policy": [expected], "hook": [expected], "hook result": [expected]}


@pytest.mark.parametrize(
    "pieces",
    [
        ['{"order": "A-7", "amount_usd": "550"}'],
        ['{"order": "A-7"}'],
        ['{"order": "A-7", "amount_usd": 5, "amount_usd": 550}'],
    ],
    ids=["wrong type", "missing field", "repeated key"],
)
async def test_arguments_the_schema_refuses_reach_no_policy_and_the_model_is_told(
    openai_server: FakeOpenAI, openai_model: Any, pieces: list[str]
) -> None:
    """Invariant: arguments that do not validate never reach an allow decision: the policy and
    hooks are not asked, nothing runs, and the model's next request carries the error result."""
    seen, refunded = Seen(), []
    agent = _agent(openai_model, seen, refunded)
    openai_server.reply(_openai_call(openai_server, pieces), _openai_text(openai_server, "Sorry."))

    done = await agent.prompt("refund A-7")

    assert done.status == "completed" and refunded == []
    assert "policy" not in seen.calls and "hook" not in seen.calls
    [result] = [m for m in openai_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "c1"
    assert not any(isinstance(e.data, ApprovalRequested | ToolStarted) for e in await agent.store.load(done.run_id))


async def test_arguments_that_are_not_json_reach_no_extension_point(
    openai_server: FakeOpenAI, openai_model: Any
) -> None:
    """Invariant: text that is not a JSON object reaches neither middleware nor the policy; the
    model is shown the error and nothing runs."""
    seen, refunded = Seen(), []
    agent = _agent(openai_model, seen, refunded)
    openai_server.reply(
        _openai_call(openai_server, ['{"order": "A-7", amount_usd: 550}']), _openai_text(openai_server, "Sorry.")
    )

    done = await agent.prompt("refund A-7")

    assert done.status == "completed" and refunded == [] and seen.calls == {}
    [result] = [m for m in done.messages if m.role == "tool"]
    assert result.is_error and "not valid JSON" in result.content


async def test_a_denial_note_reaches_the_model_on_the_wire(openai_server: FakeOpenAI, openai_model: Any) -> None:
    """Invariant: a human's denial reaches the model as the call's result with who denied it
    and their note — on the wire of the next request."""
    seen, refunded = Seen(), []
    agent = _agent(openai_model, seen, refunded)
    openai_server.reply(_openai_call(openai_server, PIECES), _openai_text(openai_server, "Understood."))
    paused = await agent.prompt("refund A-7")
    await agent.approve(paused.run_id, "c1", False, by="alice", note="amount over the desk's limit")

    done = await agent.resume(paused.run_id)

    assert done.status == "completed" and refunded == []
    [result] = [m for m in openai_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert result["content"] == "Tool call denied: denied by alice: amount over the desk's limit"
