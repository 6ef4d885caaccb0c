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
    should get, and what it is; None when every number is finite and in range.

    A call's arguments are checked several times a step (decoded, repaired, bound), nearly
    always fine: they are walked without naming where each value is, and walked again, naming
    it, only when something is wrong."""
    return None if _all_fine(value) else _first_odd(value)


def _all_fine(value: object) -> bool:
    """Whether every number in `value` is finite and in range (`_first_odd`'s walk, unnamed)."""
    stack: list[Any] = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not INT_MIN <= item <= INT_MAX:
                return False
        elif kind is dict:
            extend(item.values())
        elif kind is list:
            extend(item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif isinstance(item, bool | str):
            continue
        elif isinstance(item, float | int | dict | list | tuple | set | frozenset) or hasattr(
            item, "__pydantic_fields__"
        ):
            return False  # a subclass or a model: the named walk decides
    return True


def _first_odd(value: object) -> str | None:
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
