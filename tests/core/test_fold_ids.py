"""The fold gives ids to the messages it keeps without one, and changes nothing else about them."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime

from eudaimon.core.events import Event, ModelCalled, RunStarted
from eudaimon.core.messages import ImagePart, Message, Role, TextPart, ToolCall, Usage
from eudaimon.core.state import RunState, _with_id

AT = datetime(2024, 1, 1, tzinfo=UTC)


def test_with_id_copies_every_message_field() -> None:
    """Invariant: `_with_id(m, i) == replace(m, id=i)` for a message whose every field is set,
    so a field added to `Message` cannot be dropped by the fold's fast copy."""
    message = Message(
        role=Role.TOOL,
        content="text",
        tool_calls=(ToolCall("c1", "t", {"a": 1}),),
        tool_call_id="c1",
        is_error=True,
        id="",
        parts=(TextPart(text="text"), ImagePart(url="https://example.com/a.png")),
    )
    set_fields = {f.name for f in fields(Message)}
    assert set_fields == {"role", "content", "tool_calls", "tool_call_id", "is_error", "id", "parts"}, (
        "Message has a new field: copy it in eudaimon.core.state._with_id"
    )
    assert _with_id(message, "x") == replace(message, id="x")


def test_answers_without_an_id_get_one_derived_from_the_run_and_seq() -> None:
    """Invariant: a model answer without an id gets `{run_id}:{seq}`, the rest kept as sent."""
    state = RunState(run_id="r1")
    state.apply(Event.of("r1", 0, AT, RunStarted(agent="a", input="hi", messages=(Message.user("hi", id="m0"),))))
    answer = Message.assistant("hello")
    state.apply(Event.of("r1", 1, AT, ModelCalled(step=1, request_id="q", message=answer, usage=Usage())))
    assert state.messages[-1] == replace(answer, id="r1:1")
    assert state.usage == Usage()
