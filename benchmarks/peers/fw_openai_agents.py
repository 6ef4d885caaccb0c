"""The OpenAI Agents SDK driven by the shared transcript through a custom `Model`
(`agents.models.interface.Model`) returning `ModelResponse`s with function calls.

Tracing is disabled (`set_tracing_disabled(True)`): by default the SDK records spans and
exports them to OpenAI's servers, which is both network traffic and work the others do not
do. No durable store ships with it for runs, so it takes part in the in-memory loop only.
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse, ToolCallOutputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from peers import Outcome
from peers.transcript import Result, Turn, echo_output

set_tracing_disabled(True)


async def echo(i: int) -> str:
    """Return a short token for `i`."""
    return echo_output(i)


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

    def __init__(self, transcript: Any) -> None:
        self.transcript = transcript
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
        return ModelResponse(output=_output(self._turn(input), self._ids), usage=Usage(), response_id=None)

    async def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")


def make(transcript: Any, **_: Any) -> Agent:
    return Agent(name="bench", tools=[function_tool(echo)], model=TranscriptModel(transcript))


async def run(agent: Agent, question: str, *, max_steps: int = 25, **_: Any) -> Outcome:
    result = await Runner.run(agent, question, max_turns=max_steps + 1)
    tools = sum(1 for item in result.new_items if isinstance(item, ToolCallOutputItem))
    return Outcome(str(result.final_output), tools)
