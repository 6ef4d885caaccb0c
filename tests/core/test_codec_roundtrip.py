"""The journal's wire format: every event survives JSON, and bad rows are never skipped."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _samples import as_events, one_of_each
from eudaimon.core.codec import event_from_json, event_to_dict, event_to_json
from eudaimon.core.errors import CorruptEvent, UnknownEventType
from eudaimon.core.events import EVENT_TYPES, Event, ToolCompleted
from eudaimon.core.messages import Message


@pytest.mark.parametrize("event", as_events("run_x", one_of_each()), ids=lambda e: e.type)
def test_every_event_type_round_trips(event: Event) -> None:
    """Invariant: decode(encode(e)) == e for every event type, envelope included."""
    assert event_from_json(event_to_json(event)) == event


def test_rows_carry_version_and_envelope() -> None:
    """Invariant: each row is `{"v": 1, "run_id", "seq", "at", "type", ...fields}` (DESIGN §3)."""
    row = event_to_dict(as_events("run_x", one_of_each())[11])
    assert (row["v"], row["run_id"], row["seq"], row["type"]) == (1, "run_x", 11, "tool_completed")
    assert row["output"] == '{"ok": true}'


def test_every_registered_type_has_a_sample() -> None:
    """Invariant: the samples above cover the whole registry, so round-trip coverage is complete."""
    assert len({type(p) for p in one_of_each()}) == len(EVENT_TYPES) == 27


@given(st.text(), st.booleans(), st.integers(min_value=0, max_value=2**40))
def test_arbitrary_text_round_trips(text: str, is_error: bool, seq: int) -> None:
    """Invariant: any unicode output (control characters, surrogates aside) is stored exactly."""
    event = as_events("r", [ToolCompleted(call_id="c", tool="t", output=text, is_error=is_error)])[0]
    event = Event("r", seq, event.at, event.type, event.data)
    assert event_from_json(event_to_json(event)) == event


def test_unknown_type_names_run_seq_and_type() -> None:
    """Invariant: a row of an unknown type is an error naming it, never skipped."""
    row = json.dumps(
        {"v": 1, "run_id": "run_9", "seq": 4, "at": "2026-01-01T00:00:00+00:00", "type": "tool_teleported"}
    )
    with pytest.raises(UnknownEventType) as info:
        event_from_json(row)
    assert "run_9" in str(info.value) and "4" in str(info.value) and "tool_teleported" in str(info.value)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("{not json", "invalid JSON"),
        (
            '{"v": 1, "run_id": "run_9", "seq": 4, "at": "2026-01-01T00:00:00+00:00", "type": "tool_completed"}',
            "call_id",
        ),
        (
            '{"v": 7, "run_id": "run_9", "seq": 4, "at": "2026-01-01T00:00:00+00:00", "type": "run_failed", "error": "x"}',
            "version",
        ),
        ('{"v": 1, "run_id": "run_9", "seq": 4, "at": "yesterday", "type": "run_failed", "error": "x"}', "run_9"),
    ],
)
def test_corrupt_rows_raise_naming_run_and_seq(row: str, fragment: str) -> None:
    """Invariant: a row that does not parse raises CorruptEvent naming run and seq."""
    with pytest.raises(CorruptEvent) as info:
        event_from_json(row, run_id="run_9", seq=4)
    assert "run_9" in str(info.value) and "seq 4" in str(info.value) and fragment in str(info.value)


def test_missing_fields_with_defaults_load() -> None:
    """Invariant: rows written before a field existed still load, with the field's default."""
    row = {
        "v": 1,
        "run_id": "r",
        "seq": 2,
        "at": "2026-01-01T00:00:00+00:00",
        "type": "model_called",
        "step": 1,
        "request_id": "q",
        "message": {"role": "assistant", "content": "hi"},
    }
    event = event_from_json(json.dumps(row))
    assert event.data == event.data.__class__(step=1, request_id="q", message=Message.assistant("hi"))
