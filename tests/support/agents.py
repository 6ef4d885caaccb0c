"""Sample agents on scripted models: what a property test drives through random turns."""

from __future__ import annotations

from collections.abc import Sequence

from eudaimon import Agent, Message, ToolCall
from eudaimon.models import ScriptedModel
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
