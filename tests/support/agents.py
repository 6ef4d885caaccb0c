"""Sample agents on scripted and function models.

- `calls_once`: a model that asks for one call of a tool, then answers: the shape of most
  approval, policy and edit tests, whose tools (what they record, their effect) are their own.
- `scripted_agent`: what a property test drives through random turns.
- `settled`: a run's state once something else drives it to a pause or an end (a fleet).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from eudaimon import Agent, Message, Tool, ToolCall
from eudaimon.core.messages import JsonObject, Role
from eudaimon.core.state import RunState
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores.base import EventStore
from support.tools import explode, lookup, transfer

Turn = Sequence[tuple[str, object]] | str
"""A model turn: the tool calls it asks for (name and arguments, which may be bad JSON or name
no tool), or a text answer."""


def script_of(turns: Sequence[Turn]) -> list[Message | str]:
    """The model's script for `turns`: call ids `c{turn}_{call}`, then a final answer."""
    script: list[Message | str] = []
    for i, turn in enumerate(turns):
        if isinstance(turn, str):
            script.append(turn)
        else:
            calls = [ToolCall(f"c{i}_{j}", name, args) for j, (name, args) in enumerate(turn)]  # type: ignore[arg-type]
            script.append(Message.assistant(tool_calls=calls))
    script.append("final answer")
    return script


def scripted_agent(turns: Sequence[Turn], store: EventStore) -> Agent:
    """An agent playing `turns` with `lookup` (READ), `explode` (fails) and `transfer`
    (IRREVERSIBLE: each call waits for an approval), at most ten steps."""
    return Agent(ScriptedModel(script_of(turns)), tools=[lookup, explode, transfer], store=store, max_iterations=10)


def calls_once(
    tool: Tool,
    arguments: JsonObject | str,
    *,
    call_id: str = "c1",
    then: str | Callable[[str], str] = "done",
    heard: list[str] | None = None,
    **options: Any,
) -> Agent:
    """An agent whose model asks for one call of `tool` with `arguments` (a dict, or JSON text
    as a provider sends it), then, once it reads the call's result, answers `then` (a text, or
    a function of that result) and appends the result to `heard`. `options` go to `Agent`."""

    def answer(request: ChatRequest) -> Message | str:
        last = request.messages[-1]
        if last.role is not Role.TOOL:
            return Message.assistant(tool_calls=[ToolCall(call_id, tool.name, arguments)])
        if heard is not None:
            heard.append(last.content)
        return then(last.content) if callable(then) else then

    return Agent(FunctionModel(answer), tools=[tool], **options)


async def settled(agent: Agent, run_id: str, within_s: float = 60.0) -> RunState:
    """The run's state once it waits for a person or has ended, read from the store while
    another process (a worker of the fleet) drives it."""
    for _ in range(int(within_s / 0.05)):
        state = await agent.state(run_id)
        if state.status.is_paused or state.status.is_terminal:
            return state
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not settle within {within_s:g} s: {state.status}")
