"""A typed tool binds a call's arguments the same way whether the provider sent them as JSON text
or already decoded: decoded arguments are validated as the JSON they came from."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from eudaimon import tool
from eudaimon.tools import Tool, ToolArgumentsError


@tool
def record(name: str, weight: float = 0.0, count: int = 1) -> str:
    """Record something.

    Args:
        name: What it is.
        weight: How heavy.
        count: How many.
    """
    return name


def _outcome(t: Tool, raw: Any) -> tuple[str, Any]:
    try:
        return "ok", t.parse_arguments(raw)
    except ToolArgumentsError as exc:
        return "refused", str(exc)


@pytest.mark.parametrize(
    "arguments",
    [
        {"name": "box", "weight": 2.5, "count": 3},
        {"name": "box", "count": "3"},  # a string is not an integer in JSON Schema's terms
        {"name": 7},
        {"name": "caf\u00e9 \u2603"},
        {"name": "half a pair: \ud800"},  # a lone surrogate: pydantic's encoder refuses it
        {"name": "box", "unknown": [1, {"nested": None}]},
    ],
)
def test_decoded_arguments_bind_as_their_json_text_does(arguments: dict[str, Any]) -> None:
    assert _outcome(record, arguments) == _outcome(record, json.dumps(arguments))


def test_a_float_that_json_cannot_hold_binds_as_its_json_text_does() -> None:
    """`NaN` is not JSON, but Python's encoder writes it and providers' SDKs decode it."""
    decoded, text = _outcome(record, {"name": "x", "weight": math.nan}), _outcome(record, '{"name":"x","weight":NaN}')
    assert decoded[0] == text[0]
    if decoded[0] == "ok":
        assert math.isnan(decoded[1]["weight"]) and math.isnan(text[1]["weight"])


def test_wrong_types_are_refused_in_words_the_model_can_act_on() -> None:
    kind, message = _outcome(record, {"name": "box", "count": "3"})
    assert kind == "refused"
    assert "count" in message and "record" in message
