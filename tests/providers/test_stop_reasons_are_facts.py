"""Why a model stopped is a fact of the journal: every provider path maps its reason onto
`StopReason`, `model_called.stop_reason` records it, `AgentResponse.stop_reason` is the last
call's; a tool call whose arguments the token limit cut is never executed, and the model is told.

Before: an answer cut by `max_tokens` was `completed` with nothing on the response to say so,
and Anthropic's `pause_turn` read as `end_turn`.
"""

from __future__ import annotations

from typing import Any

import pytest
from _fake_providers import FakeAnthropic, FakeOpenAI, Received, Reply

from eudaimon import Agent, Tool, ToolCall, ToolPolicy, tool
from eudaimon.core.events import ApprovalRequested, ModelCalled, ToolStarted
from eudaimon.models import StopReason
from eudaimon.stores import MemoryStore


def _openai_text(server: FakeOpenAI, text: str, finish: str) -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            return server.completion(text, finish_reason=finish)
        return server.stream(
            [server.chunk({"role": "assistant", "content": text}), server.chunk({}, finish_reason=finish)]
        )

    return reply


def _anthropic_text(server: FakeAnthropic, text: str, stop: str) -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            return server.message([{"type": "text", "text": text}], stop_reason=stop)
        return server.stream([server.message_start(), *server.text_block(0, [text]), *server.message_end(stop)])

    return reply


async def _run(agent: Agent, streaming: bool) -> Any:
    if not streaming:
        return await agent.prompt("tell me everything")
    async for _ in agent.prompt_stream("tell me everything", run_id="run-streamed"):
        pass
    return await agent.resume("run-streamed")  # a finished run: its response, as prompt gives it


async def _stop_of(agent: Agent, run_id: str) -> str:
    [called] = [e.data for e in await agent.store.load(run_id) if isinstance(e.data, ModelCalled)]
    return called.stop_reason


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", StopReason.END_TURN),
        ("length", StopReason.MAX_TOKENS),
        ("content_filter", StopReason.CONTENT_FILTER),
    ],
)
async def test_openai_finish_reasons_are_journaled(
    openai_server: FakeOpenAI, openai_model: Any, finish: str, expected: StopReason, streaming: bool
) -> None:
    """Invariant: chat completions' `finish_reason` lands on `model_called` and the response."""
    openai_server.reply(_openai_text(openai_server, "Once upon a", finish))
    agent = Agent(openai_model, store=MemoryStore())
    done = await _run(agent, streaming)
    assert done.status == "completed"
    assert done.stop_reason is expected
    assert await _stop_of(agent, done.run_id) == expected.value


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", StopReason.END_TURN),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("stop_sequence", StopReason.STOP_SEQUENCE),
        ("refusal", StopReason.REFUSAL),
        ("pause_turn", StopReason.PAUSE_TURN),
    ],
)
async def test_anthropic_stop_reasons_are_journaled(
    anthropic_server: FakeAnthropic, anthropic_model: Any, stop: str, expected: StopReason, streaming: bool
) -> None:
    """Invariant: Anthropic's `stop_reason` lands on `model_called` and the response."""
    anthropic_server.reply(_anthropic_text(anthropic_server, "Once upon a", stop))
    agent = Agent(anthropic_model, store=MemoryStore())
    done = await _run(agent, streaming)
    assert done.stop_reason is expected
    assert await _stop_of(agent, done.run_id) == expected.value


def _refunds(model: Any, asked: list[Any], ran: list[Any]) -> Agent:
    @tool(effect="write", idempotent=True)
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        ran.append((order, amount_usd))
        return "refunded"

    def policy(call: ToolCall, tool: Tool) -> ToolPolicy:
        asked.append(call.arguments)
        return ToolPolicy.ALLOW

    return Agent(model, tools=[refund], approval_policy=policy, store=MemoryStore())


def _openai_cut_call(server: FakeOpenAI, pieces: list[str]) -> Any:
    def reply(received: Received) -> Reply:
        if not received.body.get("stream"):
            call = server.tool_call("c1", "refund", "".join(pieces))
            return server.completion(None, tool_calls=[call], finish_reason="length")
        first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "refund", "arguments": ""}}
        chunks = [server.chunk({"role": "assistant", "tool_calls": [first]})]
        chunks += [server.chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces if p]
        chunks.append(server.chunk({}, finish_reason="length"))
        return server.stream(chunks)

    return reply


def _told_cut(request: Received) -> None:
    """The model's next request carries the call's error result saying the limit cut it."""
    [result] = [m for m in request.body["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "c1"
    assert "cut off by the token limit (max_tokens)" in result["content"]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    "pieces",
    [['{"order": "A-7", ', '"amou'], ['{"order": "A-7"}'], [""]],
    ids=["cut mid-JSON", "cut before a required field", "cut before any argument"],
)
async def test_an_openai_call_cut_by_max_tokens_never_runs(
    openai_server: FakeOpenAI, openai_model: Any, pieces: list[str], streaming: bool
) -> None:
    """Invariant: a call whose arguments the token limit cut (finish_reason `length`, the
    arguments do not read or do not validate) never reaches the policy and never runs; the
    model is told its arguments were cut; `model_called` says `max_tokens`."""
    asked: list[Any] = []
    ran: list[Any] = []
    agent = _refunds(openai_model, asked, ran)
    openai_server.reply(_openai_cut_call(openai_server, pieces), _openai_text(openai_server, "Sorry.", "stop"))

    if streaming:
        async for _ in agent.prompt_stream("refund A-7", run_id="run-cut"):
            pass
        run_id = "run-cut"
    else:
        run_id = (await agent.prompt("refund A-7")).run_id

    assert ran == [] and asked == []
    _told_cut(openai_server.requests[1])
    events = await agent.store.load(run_id)
    assert not any(isinstance(e.data, ApprovalRequested | ToolStarted) for e in events)
    first = next(e.data for e in events if isinstance(e.data, ModelCalled))
    assert first.stop_reason == "max_tokens"


async def test_an_anthropic_call_cut_by_max_tokens_never_runs(
    anthropic_server: FakeAnthropic, anthropic_model: Any
) -> None:
    """Invariant: the same over Anthropic's stream: `partial_json` pieces cut by `max_tokens`."""
    asked: list[Any] = []
    ran: list[Any] = []
    agent = _refunds(anthropic_model, asked, ran)
    cut = [
        anthropic_server.message_start(),
        *anthropic_server.tool_block(0, "c1", "refund", ['{"order": "A-', '7", "amount_u']),
        *anthropic_server.message_end("max_tokens"),
    ]
    anthropic_server.reply(anthropic_server.stream(cut), _anthropic_text(anthropic_server, "Sorry.", "end_turn"))

    async for _ in agent.prompt_stream("refund A-7", run_id="run-cut"):
        pass

    assert ran == [] and asked == []
    [result] = [
        block
        for m in anthropic_server.requests[1].body["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]
    assert result["is_error"] is True
    assert "cut off by the token limit (max_tokens)" in str(result["content"])
