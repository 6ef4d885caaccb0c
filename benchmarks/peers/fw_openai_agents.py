"""The OpenAI Agents SDK driven by the shared transcript through a custom `Model`
(`agents.models.interface.Model`) returning `ModelResponse`s with function calls.

Tracing is disabled (`set_tracing_disabled(True)`): by default the SDK records spans and
exports them to OpenAI's servers, which is both network traffic and work the others do not
do. No durable store ships with it for runs, so it takes part in the in-memory workloads only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from importlib.metadata import version as _dist_version
from typing import Any

from agents.items import ModelResponse, ToolCallOutputItem
from agents.models.interface import Model
from agents.usage import Usage
from common import Outcome
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)
from transcript import Result, Turn, echo_output, fetch_output

from agents import Agent, Runner, function_tool, set_tracing_disabled

NAME = "openai-agents"
set_tracing_disabled(True)


def version() -> str:
    return f"openai-agents {_dist_version('openai-agents')}"


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


async def fetch(n: int) -> str:
    """Return the 4 KB record `n`."""
    return fetch_output(n)


_TOOLS = {"echo": echo, "fetch": fetch}


def _latest(items: str | list[Any]) -> tuple[str | None, list[Result]]:
    if isinstance(items, str):
        return items, []
    last = items[-1]
    if _get(last, "role") == "user":
        content = _get(last, "content")
        return (content if isinstance(content, str) else content[0]["text"]), []
    results: list[Result] = []
    i = len(items) - 1
    while i >= 0 and _get(items[i], "type") == "function_call_output":
        output = _get(items[i], "output")
        results.append(Result(_get(items[i], "call_id"), output if isinstance(output, str) else json.dumps(output)))
        i -= 1
    results.reverse()
    return None, results


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _output(turn: Turn, counter: list[int]) -> list[Any]:
    counter[0] += 1
    if turn.calls:
        return [
            ResponseFunctionToolCall(
                id=f"fc_{c.id}", call_id=c.id, type="function_call", name=c.name, arguments=json.dumps(c.args)
            )
            for c in turn.calls
        ]
    return [
        ResponseOutputMessage(
            id=f"msg_{counter[0]}",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(text=turn.text, type="output_text", annotations=[])],
        )
    ]


class TranscriptModel(Model):
    """A `Model` whose answer is the transcript's, read off the latest input items."""

    def __init__(self, transcript: Any, latency_s: float = 0.0) -> None:
        self.transcript = transcript
        self.latency_s = latency_s
        self._ids = [0]

    def _turn(self, input: Any) -> Turn:
        question, results = _latest(input)
        return self.transcript.first(question) if question is not None else self.transcript.after_tools(results)

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kw: Any,
    ) -> ModelResponse:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return ModelResponse(output=_output(self._turn(input), self._ids), usage=Usage(), response_id=None)

    async def stream_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kw: Any,
    ) -> AsyncIterator[Any]:
        turn = self._turn(input)
        output = _output(turn, self._ids)
        seq = 0
        if not turn.calls:
            item_id = output[0].id
            # `model_construct`, as the openai client builds streamed events (no validation).
            for piece in self.transcript.pieces:
                yield ResponseTextDeltaEvent.model_construct(
                    type="response.output_text.delta",
                    item_id=item_id,
                    output_index=0,
                    content_index=0,
                    delta=piece,
                    sequence_number=seq,
                    logprobs=[],
                )
                seq += 1
        response = Response.model_construct(
            id="resp",
            created_at=0,
            model="fake",
            object="response",
            output=output,
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=True,
            status="completed",
            usage=None,
            top_p=None,
        )
        yield ResponseCompletedEvent.model_construct(type="response.completed", response=response, sequence_number=seq)


def construct() -> Any:
    """Workload 1: an agent with one tool (a plain async function, wrapped by `function_tool`)."""
    return Agent(name="bench", tools=[function_tool(echo)], model=TranscriptModel(None))


def make(transcript: Any, *, latency_s: float = 0.0, **_: Any) -> Agent:
    tools = [function_tool(_TOOLS[transcript.tool])] if getattr(transcript, "tool", None) else []
    return Agent(name="bench", tools=tools, model=TranscriptModel(transcript, latency_s))


async def run(agent: Agent, question: str, *, max_steps: int = 25, **_: Any) -> Outcome:
    result = await Runner.run(agent, question, max_turns=max_steps + 1)
    tools = sum(1 for item in result.new_items if isinstance(item, ToolCallOutputItem))
    return Outcome(str(result.final_output), tools)


async def run_concurrent(agent: Agent, question: str) -> Outcome:
    """For many runs at once: a shallow `agent.clone()` per run, as the SDK's own error message
    advises. Sharing one `Agent` among N live runs makes every turn scan the N runs registered
    on it (`agent_tool_configuration._observe_tools`): O(N) per turn, O(N²) for the burst."""
    return await run(agent.clone(), question)


async def stream(agent: Agent, question: str) -> tuple[int, Outcome]:
    deltas = 0
    text: list[str] = []
    result = Runner.run_streamed(agent, question, max_turns=3)
    async for event in result.stream_events():
        if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
            deltas += 1
            text.append(event.data.delta)
    return deltas, Outcome("".join(text), 0)
