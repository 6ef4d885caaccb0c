"""Arguments an approver edited: checked against the tool's schema before they are journaled.

An approver may correct a call before it runs (a smaller amount, another account). What they
send must be what the tool accepts, or the run would go on to an error the approver never saw:
so the edit is refused, naming the problem, and nothing is written. The schema is the agent's
tool when the caller has the agent; otherwise the one the journal recorded (a toolset's tool,
or the specs a step offered). Where neither is known the edit is only checked to be a JSON
object; the runtime validates it again before the call runs, as it does every call.
"""

from __future__ import annotations

import json
from typing import Any

from eudaimon.core.errors import InvalidArguments
from eudaimon.core.messages import JsonObject
from eudaimon.core.state import RunState
from eudaimon.tools import Tool, ToolArgumentsError


def checked_edit(state: RunState, call_id: str, arguments: object, tool: Tool | None = None) -> JsonObject:
    """`arguments` as journaled for `approval_decided`, or `InvalidArguments` saying why not."""
    progress = state.calls.get(call_id)
    name = progress.call.name if progress is not None else "?"
    where = f"the edited arguments of call {call_id!r} ({name})"
    if not isinstance(arguments, dict) or not all(isinstance(key, str) for key in arguments):
        raise InvalidArguments(f"{where} must be a JSON object, got {type(arguments).__name__}")
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidArguments(f"{where} are not JSON ({exc})") from None
    checker = tool if tool is not None and tool.name == name else _journaled_tool(state, name)
    if checker is not None:
        try:
            checker.parse_arguments(arguments, validate=True)
        except ToolArgumentsError as exc:
            raise InvalidArguments(f"{where} were refused: {exc}") from None
    return arguments


def _journaled_tool(state: RunState, name: str) -> Tool | None:
    """A stand-in for the tool `name` built from the schema the journal holds, if any."""
    schema: dict[str, Any] | None = None
    for spec in state.offered_tools or ():
        if spec.name == name:
            schema = dict(spec.parameters)
    for record in state.tools:
        if record.name == name:
            schema = dict(record.parameters)
    if not schema:
        return None
    return Tool(name=name, description="", parameters=schema, function=_never).compiled()


def _never(**_: Any) -> None:  # pragma: no cover - a stand-in validates, it never runs
    raise AssertionError("a schema stand-in never runs")
