"""`check_payload` refuses exactly what would not read back, on its short path and its long one.

The events of every step are checked by plain type tests (`core/validity.py`), the others by
the codec's writer in strict mode. These tests hold the two against each other field by field,
and hold both against the journal's real round trip, so the short path can never let through a
row the codec would write and then fail to read.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from eudaimon.core import validity
from eudaimon.core.codec import encoding_problem, event_from_json, event_to_json
from eudaimon.core.errors import InvalidEvent
from eudaimon.core.events import Event, ModelAttemptStarted, ModelCalled, ToolCompleted, ToolStarted
from eudaimon.core.messages import Message, Role, ToolCall, Usage
from eudaimon.runtime.loop.clock import now

GOOD: list[Any] = [
    ModelAttemptStarted(step=1, request_id="r", request_digest="d", model="m"),
    ModelCalled(
        step=1,
        request_id="r",
        message=Message.assistant("hi", [ToolCall("c", "t", {"a": [1, {"b": None}]}), ToolCall("d", "t", '{"x":1}')]),
        usage=Usage(3, 4, 1),
        cost_usd=0.25,
        model="m",
        duration_ms=5,
    ),
    ToolStarted(call_id="c", tool="t", idempotency_key="k", attempt=2, arguments={"n": 1}),
    ToolCompleted(call_id="c", tool="t", output="ok", is_error=True, duration_ms=1),
]


class _Opaque:
    """A value no JSON encoder knows, named the same in every process (test ids must match
    across pytest-xdist's workers; `object()`'s repr is its address)."""

    def __repr__(self) -> str:
        return "opaque()"


BAD_VALUES: list[Any] = [None, 5, 1.5, True, "s", [1], (1,), {"k": 1}, _Opaque(), float("nan")]


def _variants() -> list[tuple[str, Any]]:
    """Every good payload with one field (or one field of its message, call or usage) replaced."""
    out: list[tuple[str, Any]] = []
    for good in GOOD:
        for field in dataclasses.fields(good):
            for bad in BAD_VALUES:
                out.append((f"{good.type}.{field.name}={bad!r}", dataclasses.replace(good, **{field.name: bad})))
    called = GOOD[1]
    for field in dataclasses.fields(Message):
        for bad in BAD_VALUES:
            message = dataclasses.replace(called.message, **{field.name: bad})
            out.append((f"message.{field.name}={bad!r}", dataclasses.replace(called, message=message)))
    for field in dataclasses.fields(ToolCall):
        for bad in BAD_VALUES:
            call = dataclasses.replace(called.message.tool_calls[0], **{field.name: bad})
            message = dataclasses.replace(called.message, tool_calls=(call,))
            out.append((f"call.{field.name}={bad!r}", dataclasses.replace(called, message=message)))
    for field in dataclasses.fields(Usage):
        for bad in BAD_VALUES:
            usage = dataclasses.replace(called.usage, **{field.name: bad})
            out.append((f"usage.{field.name}={bad!r}", dataclasses.replace(called, usage=usage)))
    return out


def _reads_back(data: Any) -> bool:
    """The journal's own round trip, warnings ignored: does the written row parse again?"""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = event_to_json(Event.of("r", 1, now(), data))
        event_from_json(text)
    except Exception:
        return False
    return True


def test_the_short_paths_are_in_use() -> None:
    """Guard: every step event has its short path (a new field turns it off; update it)."""
    assert validity._FAST_MESSAGES
    assert set(validity._FAST) == {ModelAttemptStarted, ModelCalled, ToolStarted, ToolCompleted}


def test_good_payloads_pass_both_paths() -> None:
    """Invariant: what the runtime writes every step passes the short path and the writer."""
    for good in GOOD:
        validity.check_payload(good)
        assert encoding_problem(good) is None


@pytest.mark.parametrize(("name", "data"), _variants(), ids=[name for name, _ in _variants()])
def test_the_short_path_refuses_whatever_would_not_read_back(name: str, data: Any) -> None:
    """Invariant: a payload the journal would write and then fail to read is refused by the
    short path; and whatever the short path accepts the strict writer accepts too."""
    short = validity._FAST[type(data)](data)
    if not _reads_back(data):
        assert short is not None, f"{name}: would not read back, yet passed the short path"
    if short is None:
        assert encoding_problem(data) is None, f"{name}: the short path accepted what the writer refuses"
    if short is not None:
        with pytest.raises(InvalidEvent):
            validity.check_payload(data)


def test_deep_values_are_refused_and_lone_surrogates_are_not() -> None:
    """Invariant: JSON nested deeper than a row may hold is refused; a lone surrogate, which
    the stores escape and read back, is not."""
    deep: Any = {}
    for _ in range(5000):
        deep = {"a": deep}
    assert validity.arguments_problem(deep) is not None
    assert validity.arguments_problem({"s": "\ud800"}) is None
    assert encoding_problem(ToolCompleted(call_id="c", tool="t", output="\ud800")) is None


def test_a_message_with_a_str_role_is_refused() -> None:
    """Invariant: the fold tells roles apart by identity (`is Role.USER`), so a plain string
    role would fold differently live and from the journal: it is refused."""
    bad = Message(role="user", content="x")  # type: ignore[arg-type]
    assert validity.message_problem(bad) is not None
    assert validity.message_problem(Message(role=Role.USER, content="x")) is None
