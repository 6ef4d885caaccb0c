"""`quick_init` replaces a frozen dataclass's `__init__` for speed: it must build exactly what
the dataclass's own would, refuse what it would refuse, and leave the class frozen."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from eudaimon.core.events import Event, ModelAttemptStarted, ModelCalled, ToolCompleted, ToolStarted
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.core.quick_init import quick_init


def _twin() -> tuple[type, type]:
    def make() -> type:
        @dataclass(frozen=True, slots=True)
        class Sample:
            a: int
            b: str = "b"
            c: list[int] = field(default_factory=list)
            d: int = field(default=4, kw_only=True)
            e: dict[str, int] = field(default_factory=dict, kw_only=True)

            def __post_init__(self) -> None:
                if self.a < 0:
                    raise ValueError("a < 0")

        return Sample

    return make(), quick_init(make())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, "x", [2]), {"d": 5, "e": {"k": 1}}), ((), {"a": 2, "c": [3]})],
)
def test_the_same_instance_from_the_same_arguments(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    plain, quick = _twin()
    assert dataclasses.asdict(quick(*args, **kwargs)) == dataclasses.asdict(plain(*args, **kwargs))


def test_the_same_signature_and_refusals() -> None:
    plain, quick = _twin()
    assert list(inspect.signature(quick).parameters) == list(inspect.signature(plain).parameters)
    assert [p.kind for p in inspect.signature(quick).parameters.values()] == [
        p.kind for p in inspect.signature(plain).parameters.values()
    ]
    for cls in (plain, quick):
        with pytest.raises(TypeError):
            cls()  # a required field missing
        with pytest.raises(TypeError):
            cls(1, "b", [], 5)  # a keyword-only field given by position
        with pytest.raises(ValueError, match="a < 0"):
            cls(-1)  # __post_init__ runs
    first, second = quick(1), quick(1)
    assert first.c is not second.c  # a default factory makes one each time


def test_the_classes_of_a_step_stay_frozen_and_complete() -> None:
    message = Message.assistant(tool_calls=[ToolCall("c1", "echo", {"i": 1})])
    built = [
        Event("r", 0, datetime.now(UTC), "tool_started", ToolStarted(call_id="c1", tool="echo", idempotency_key="k")),
        ModelAttemptStarted(step=1, request_id="q", request_digest="d"),
        ModelCalled(step=1, request_id="q", message=message),
        ToolCompleted(call_id="c1", tool="echo", output="1"),
        message,
        ToolCall("c1", "echo"),
        Usage(1, 2),
    ]
    for instance in built:
        for f in dataclasses.fields(instance):
            getattr(instance, f.name)  # every slot was set
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(instance, dataclasses.fields(instance)[0].name, None)
    with pytest.raises(ValueError, match="does not match its payload"):
        Event("r", 0, built[0].at, "model_called", built[0].data)  # type: ignore[attr-defined]
