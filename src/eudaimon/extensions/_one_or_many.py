"""`one_or_many`: how an extension point (hooks, middleware) reads what the user passed it."""

from __future__ import annotations

from collections.abc import Sequence


def one_or_many(value: object | Sequence[object] | None) -> tuple[object, ...]:
    """`value` as a tuple of items: None is no item, a sequence its items, anything else one item.

    A string or bytes is one item, not a sequence of characters.
    """
    if value is None:
        return ()
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return tuple(value)
    return (value,)
