"""Pydantic AI driven by the shared transcript through `FunctionModel` (its fake-model hook).

No durable store ships with Pydantic AI, so it takes part in the in-memory loop only.
`UsageLimits(request_limit=None)` lifts the default cap of 50 model requests per run.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from peers import Outcome
from peers.transcript import Result, Turn, echo_output

_NO_LIMIT = UsageLimits(request_limit=None)


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


def _latest(messages: list[ModelMessage]) -> tuple[str | None, list[Result]]:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    results: list[Result] = []
    question: str | None = None
    for part in last.parts:
        if isinstance(part, UserPromptPart):
            question = part.content if isinstance(part.content, str) else str(part.content)
        elif isinstance(part, ToolReturnPart):
            results.append(Result(part.tool_call_id, part.model_response_str()))
    return (question, []) if question is not None and not results else (None, results)


def _response(turn: Turn) -> ModelResponse:
    if turn.calls:
        return ModelResponse(parts=[ToolCallPart(c.name, dict(c.args), tool_call_id=c.id) for c in turn.calls])
    return ModelResponse(parts=[TextPart(turn.text)])


def make(transcript: Any, **_: Any) -> Agent:
    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question, results = _latest(messages)
        return _response(transcript.first(question) if question is not None else transcript.after_tools(results))

    return Agent(FunctionModel(answer), tools=[echo])


async def run(agent: Agent, question: str, **_: Any) -> Outcome:
    result = await agent.run(question, usage_limits=_NO_LIMIT)
    tools = sum(
        1
        for m in result.new_messages()
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    )
    return Outcome(str(result.output), tools)
