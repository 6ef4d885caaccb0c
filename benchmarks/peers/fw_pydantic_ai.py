"""Pydantic AI driven by the shared transcript through `FunctionModel` (its fake-model hook).

No durable store ships with Pydantic AI, so it takes part in the in-memory workloads only.
`UsageLimits(request_limit=None)` lifts the default cap of 50 model requests per run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from importlib.metadata import version as _dist_version
from typing import Any

from common import Outcome
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
from transcript import Result, Turn, echo_output, fetch_output

NAME = "pydantic-ai"
_NO_LIMIT = UsageLimits(request_limit=None)


def version() -> str:
    return f"pydantic-ai-slim {_dist_version('pydantic-ai-slim')}"


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


async def fetch(n: int) -> str:
    """Return the 4 KB record `n`."""
    return fetch_output(n)


_TOOLS = {"echo": echo, "fetch": fetch}


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


def _model(transcript: Any, latency_s: float) -> FunctionModel:
    def answer(messages: list[ModelMessage]) -> ModelResponse:
        question, results = _latest(messages)
        return _response(transcript.first(question) if question is not None else transcript.after_tools(results))

    async def function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if latency_s:
            await asyncio.sleep(latency_s)
        return answer(messages)

    async def stream_function(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in transcript.pieces:
            yield piece

    return FunctionModel(function, stream_function=stream_function if hasattr(transcript, "pieces") else None)


def construct() -> Any:
    """Workload 1: an agent with one tool (a plain async function)."""
    return Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("ok")])), tools=[echo])


def make(transcript: Any, *, latency_s: float = 0.0, **_: Any) -> Agent:
    tools = [_TOOLS[transcript.tool]] if getattr(transcript, "tool", None) else []
    return Agent(_model(transcript, latency_s), tools=tools)


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


async def stream(agent: Agent, question: str) -> tuple[int, Outcome]:
    deltas = 0
    text: list[str] = []
    async with agent.run_stream(question, usage_limits=_NO_LIMIT) as result:
        # debounce_by=None: every delta the model produced, not batches of 100 ms.
        async for piece in result.stream_text(delta=True, debounce_by=None):
            deltas += 1
            text.append(piece)
    return deltas, Outcome("".join(text), 0)
