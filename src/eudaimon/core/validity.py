"""Whether an event will read back: checked before the runtime records it, never after.

The journal must never hold a row it cannot read back: one such row makes `state`, `resume`
and every reader of the run fail from then on, after its effects happened. pydantic writes a
`None` name, an int id or a float token count with only a warning, and the row then fails to
parse. So the runtime checks every payload before it touches the state or the buffer
(`RunJournal.record`), and a payload that would not read back is refused with `InvalidEvent`.

The check is the codec's own writer in strict mode (any mismatch with a declared type is an
error, as is a value JSON cannot hold or nesting deeper than it allows). The events of every
step (`model_attempt_started`, `model_called`, `tool_started`, `tool_completed`) take a
shorter path of plain type tests, a fraction of the writer's cost, that refuses the same rows
(`tests/core/test_event_validity.py` holds the two against each other). Should one of those
classes gain a field, its short path turns itself off and the writer checks it instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import fields
from functools import cache
from typing import Any

from eudaimon.core.codec import encoding_problem
from eudaimon.core.errors import InvalidEvent
from eudaimon.core.events import EventData, ModelAttemptStarted, ModelCalled, ToolCompleted, ToolStarted
from eudaimon.core.messages import NO_USAGE, Message, Role, ToolCall, Usage

MAX_DEPTH = 250
"""The deepest nesting of JSON values an event may hold (the codec's writer stops near 255)."""


def check_payload(data: EventData, *, run_id: str | None = None) -> None:
    """Raise `InvalidEvent` unless `data` would be journaled and read back unchanged in type.

    Raises:
        InvalidEvent: names the event type and the first field that is wrong.
    """
    fast = _FAST.get(type(data))
    problem = fast(data) if fast is not None else encoding_problem(data)
    if problem is not None:
        raise InvalidEvent(getattr(data, "type", type(data).__name__), problem, run_id=run_id)


def message_problem(message: object, where: str = "message") -> str | None:
    """What is wrong with `message` as a journaled `Message`, or None."""
    if type(message) is not Message:
        return f"{where} must be a Message, got {_kind(message)}"
    if not _FAST_MESSAGES:
        return None  # the codec's writer checks it, with the event
    if not isinstance(message.role, Role):
        return f"{where}.role must be a Role, got {_kind(message.role)}"
    problem = _text(message.content, f"{where}.content") or _text(message.id, f"{where}.id")
    if problem is None and message.tool_call_id is not None:
        problem = _text(message.tool_call_id, f"{where}.tool_call_id")
    if problem is None and type(message.is_error) is not bool:
        problem = f"{where}.is_error must be a bool, got {_kind(message.is_error)}"
    if problem is not None:
        return problem
    if type(message.parts) is not tuple:
        return f"{where}.parts must be a tuple of content parts, got {_kind(message.parts)}"
    calls = message.tool_calls
    if type(calls) is not tuple:
        return f"{where}.tool_calls must be a tuple of ToolCall, got {_kind(calls)}"
    for index, call in enumerate(calls):
        problem = _call_problem(call, f"{where}.tool_calls[{index}]")
        if problem is not None:
            return problem
    return None


def usage_problem(usage: object, where: str = "usage") -> str | None:
    if type(usage) is not Usage:
        return f"{where} must be a Usage, got {_kind(usage)}"
    return (
        _int(usage.input_tokens, f"{where}.input_tokens")
        or _int(usage.output_tokens, f"{where}.output_tokens")
        or _int(usage.cached_tokens, f"{where}.cached_tokens")
    )


def arguments_problem(arguments: object, where: str = "arguments") -> str | None:
    """A call's arguments: the raw JSON text a provider sent, or an object with string keys."""
    if type(arguments) is str:
        return None
    if not isinstance(arguments, dict):
        return f"{where} must be a JSON object or its text, got {_kind(arguments)}"
    for key in arguments:
        if type(key) is not str:
            return f"{where} has a key that is not a string: {_kind(key)}"
    return json_problem(arguments, where)


@cache
def _writer() -> tuple[Callable[[object], bytes], type[Exception]]:
    """pydantic's JSON writer (the one the journal's codec uses) and its error, on first use."""
    from pydantic_core import PydanticSerializationError, to_json

    return to_json, PydanticSerializationError


def json_problem(value: object, where: str) -> str | None:
    """Whether `value` is JSON the journal can hold: known types, nesting within `MAX_DEPTH`."""
    to_json, serialization_error = _writer()
    try:
        to_json(value)
    except serialization_error as exc:
        if "surrogate" not in str(exc):
            return f"{where} cannot be written as JSON: {_first_line(exc)}"
        # A lone surrogate: stores escape it (json.dumps), so only the rest needs checking.
        try:
            json.dumps(value)
        except (TypeError, ValueError, RecursionError) as again:
            return f"{where} cannot be written as JSON: {_first_line(again)}"
        if _depth(value) > MAX_DEPTH:
            return f"{where} is nested more than {MAX_DEPTH} levels deep"
    except (ValueError, TypeError, RecursionError) as exc:
        return f"{where} cannot be written as JSON: {_first_line(exc)}"
    return None


def _call_problem(call: object, where: str) -> str | None:
    if type(call) is not ToolCall:
        return f"{where} must be a ToolCall, got {_kind(call)}"
    return (
        _text(call.id, f"{where}.id")
        or _text(call.name, f"{where}.name")
        or arguments_problem(call.arguments, f"{where}.arguments")
    )


def _model_attempt_started(data: ModelAttemptStarted) -> str | None:
    problem = (
        _int(data.step, "step")
        or _text(data.request_id, "request_id")
        or _text(data.request_digest, "request_digest")
        or _text(data.model, "model")
        or _text(data.tools_digest, "tools_digest")
    )
    if problem is None and data.tools is not None:
        problem = encoding_problem(data)  # tool specs carry JSON Schemas: the writer checks them
    return problem


_SCALARS = frozenset({str, int, bool, type(None)})


def _flat_ok(arguments: dict[Any, Any]) -> bool:
    """Whether arguments are the usual kind — string keys, scalar values — that need no writer."""
    return all(type(key) is str and type(value) in _SCALARS for key, value in arguments.items())


def _message_ok(message: object) -> bool:
    """The common case of `message_problem`, answered with plain type tests only."""
    if not (
        type(message) is Message
        and type(message.role) is Role
        and type(message.content) is str
        and type(message.id) is str
        and type(message.is_error) is bool
        and (message.tool_call_id is None or type(message.tool_call_id) is str)
        and type(message.tool_calls) is tuple
        and type(message.parts) is tuple
        and not message.parts
    ):
        return False
    for call in message.tool_calls:
        if not (type(call) is ToolCall and type(call.id) is str and type(call.name) is str):
            return False
        arguments = call.arguments
        if type(arguments) is not str and not (type(arguments) is dict and _flat_ok(arguments)):
            return False
    return True


def _model_called(data: ModelCalled) -> str | None:
    usage, cost = data.usage, data.cost_usd
    if (
        _FAST_MESSAGES
        and type(data.step) is int
        and type(data.request_id) is str
        and type(data.model) is str
        and type(data.duration_ms) is int
        and type(data.stop_reason) is str
        and type(data.short_circuited_by) is str
        and type(usage) is Usage
        and type(usage.input_tokens) is int
        and type(usage.output_tokens) is int
        and type(usage.cached_tokens) is int
        and (cost is None or type(cost) is int or (type(cost) is float and math.isfinite(cost)))
        and _message_ok(data.message)
    ):
        return None
    return _explain_model_called(data)


def _explain_model_called(data: ModelCalled) -> str | None:
    problem = (
        _int(data.step, "step")
        or _text(data.request_id, "request_id")
        or message_problem(data.message)
        or usage_problem(data.usage)
        or _text(data.model, "model")
        or _int(data.duration_ms, "duration_ms")
        or _text(data.stop_reason, "stop_reason")
        or _text(data.short_circuited_by, "short_circuited_by")
    )
    if problem is None and data.cost_usd is not None:
        problem = _number(data.cost_usd, "cost_usd")
    if problem is None and (not _FAST_MESSAGES or data.message.parts):  # parts: the writer checks them
        problem = encoding_problem(data)
    return problem


def _tool_started(data: ToolStarted) -> str | None:
    arguments = data.arguments
    if (
        type(data.call_id) is str
        and type(data.tool) is str
        and type(data.idempotency_key) is str
        and type(data.attempt) is int
        and (type(arguments) is str or (type(arguments) is dict and _flat_ok(arguments)))
        and type(data.effect) is str
        and (data.datasource is None or type(data.datasource) is str)
    ):
        return None
    return (
        _text(data.call_id, "call_id")
        or _text(data.tool, "tool")
        or _text(data.idempotency_key, "idempotency_key")
        or _int(data.attempt, "attempt")
        or _text(data.effect, "effect")
        or (None if data.datasource is None else _text(data.datasource, "datasource"))
        or arguments_problem(data.arguments)
    )


def _tool_completed(data: ToolCompleted) -> str | None:
    problem = _text(data.call_id, "call_id") or _text(data.tool, "tool") or _text(data.output, "output")
    if problem is None and type(data.is_error) is not bool:
        problem = f"is_error must be a bool, got {_kind(data.is_error)}"
    if problem is None and type(data.retry) is not bool:
        problem = f"retry must be a bool, got {_kind(data.retry)}"
    if problem is None and type(data.recovered) is not bool:
        problem = f"recovered must be a bool, got {_kind(data.recovered)}"
    if problem is None and data.datasource is not None and type(data.datasource) is not str:
        problem = f"datasource must be a string, got {_kind(data.datasource)}"
    problem = problem or _int(data.duration_ms, "duration_ms")
    if problem is None and type(data.parts) is not tuple:
        problem = f"parts must be a tuple of content parts, got {_kind(data.parts)}"
    if problem is None and data.parts:
        problem = encoding_problem(data)  # content parts: the writer checks them
    if problem is None and type(data.usage) is not Usage:
        problem = f"usage must be a Usage, got {_kind(data.usage)}"
    if problem is None and data.child_run_id is not None and type(data.child_run_id) is not str:
        problem = f"child_run_id must be a string, got {_kind(data.child_run_id)}"
    if problem is None and (data.child_run_id is not None or data.cost_usd is not None or data.usage != NO_USAGE):
        problem = encoding_problem(data)  # a child run's link and bill: rare, so the writer checks them
    return problem


def _text(value: object, where: str) -> str | None:
    return None if type(value) is str else f"{where} must be a string, got {_kind(value)}"


def _int(value: object, where: str) -> str | None:
    return None if type(value) is int else f"{where} must be an int, got {_kind(value)}"


def _number(value: object, where: str) -> str | None:
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return None
    return f"{where} must be a finite number, got {_kind(value)}"


def _kind(value: object) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40]}{'…' if len(shown) > 40 else ''}"


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _depth(value: object) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


_FAST_MESSAGES = (
    _names(Message) == ("role", "content", "tool_calls", "tool_call_id", "is_error", "id", "parts")
    and _names(ToolCall) == ("id", "name", "arguments")
    and _names(Usage) == ("input_tokens", "output_tokens", "cached_tokens")
)
"""Whether `message_problem` knows every field of a message: else the codec's writer checks."""

_COVERED: dict[type[Any], tuple[tuple[str, ...], Callable[[Any], str | None]]] = {
    ModelAttemptStarted: (
        ("step", "request_id", "request_digest", "model", "tools_digest", "tools"),
        _model_attempt_started,
    ),
    ModelCalled: (
        (
            "step",
            "request_id",
            "message",
            "usage",
            "cost_usd",
            "model",
            "duration_ms",
            "stop_reason",
            "short_circuited_by",
        ),
        _model_called,
    ),
    ToolStarted: (
        ("call_id", "tool", "idempotency_key", "attempt", "arguments", "effect", "datasource"),
        _tool_started,
    ),
    ToolCompleted: (
        (
            "call_id",
            "tool",
            "output",
            "is_error",
            "duration_ms",
            "child_run_id",
            "usage",
            "cost_usd",
            "parts",
            "retry",
            "datasource",
            "recovered",
        ),
        _tool_completed,
    ),
}
_FAST: dict[type[Any], Callable[[Any], str | None]] = {
    cls: check for cls, (names, check) in _COVERED.items() if _names(cls) == names
}
"""The short paths whose event class has exactly the fields they test."""
