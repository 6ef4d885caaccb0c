"""`quick_init`: a frozen, slotted dataclass's `__init__`, assigning through its slots directly.

A frozen dataclass's generated `__init__` assigns each field with `object.__setattr__(self,
name, value)`, a name lookup per field: the four events of every step, their envelopes, the
model's message and its calls cost 2-3x what the same classes unfrozen would. This `__init__`
takes the same parameters (positional, keyword-only, defaults, default factories) and calls
each slot's own descriptor instead, then `__post_init__` where the class has one. The class
stays frozen: assigning to an instance still raises `FrozenInstanceError`.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

C = TypeVar("C", bound=type[Any])

_FACTORY = object()
"""A parameter left to its default factory."""


def quick_init(cls: C) -> C:
    """Give `cls` (a `@dataclass(frozen=True, slots=True)`) the faster `__init__`; returns it."""
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    for f in fields(cls):
        if not f.init:
            raise TypeError(f"quick_init: {cls.__name__}.{f.name} is not an __init__ parameter")
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__  # the slot's member descriptor
        value = f.name
        if f.default is not MISSING:
            env[f"_default_{f.name}"] = f.default
            param = f"{f.name}=_default_{f.name}"
        elif f.default_factory is not MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            param = f"{f.name}=_FACTORY"
            value = f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            param = f.name
        (keyword if f.kw_only else positional).append(param)
        body.append(f"    _set_{f.name}(self, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({params}) -> None:\n" + "\n".join(body or ["    pass"])
    exec(source, env)  # the way `dataclasses` makes its own __init__
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init
    return cls
