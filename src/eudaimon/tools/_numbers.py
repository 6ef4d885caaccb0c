"""Numbers a call's arguments may hold: finite, and integers a 64-bit field holds.

Python's `json` reads `NaN`, `Infinity` and `1e999` (as `inf`), and any integer however long;
a tool typed `float` then gets `inf` from a 401-digit integer. No JSON reader elsewhere agrees
on what such numbers mean, and a refund of `inf` dollars is no one's intent: so arguments that
hold them are refused where they enter, the model's and an approver's alike, naming the field.
"""

from __future__ import annotations

import math
from typing import Any

INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
"""The integers an argument may hold: what a signed or unsigned 64-bit field holds."""


def odd_number(value: object) -> str | None:
    """Where `value` (decoded JSON, or what a tool's model parsed it into) holds a number no tool
    should get, and what it is; None when every number is finite and in range."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path or '(root)'}: {item} is not a finite number"
        elif isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                return f"{path or '(root)'}: an integer of {len(str(abs(item)))} digits is beyond 64 bits"
        elif isinstance(item, dict):
            stack.extend((f"{path}.{key}" if path else str(key), inner) for key, inner in item.items())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((f"{path}[{i}]", inner) for i, inner in enumerate(item))
        elif hasattr(item, "__pydantic_fields__"):
            stack.extend((f"{path}.{key}" if path else key, inner) for key, inner in vars(item).items())
    return None


def refuse_constant(name: str) -> float:
    """`json.loads(parse_constant=…)`: `NaN`, `Infinity` and `-Infinity` are not JSON."""
    raise ValueError(f"{name} is not a JSON number")
