"""One value per running event loop, made on first use and dropped with the loop.

Every step of every run asks for its loop's shared helpers (turns, lease renewals, cancel
polling), from one loop mostly: the loop asked last is remembered, since a `WeakKeyDictionary`
lookup makes a weak reference each time.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(Generic[T]):
    """`registry.get()`: the running loop's value, made by `make(loop)` when new."""

    def __init__(self, make: Callable[[asyncio.AbstractEventLoop], T]) -> None:
        self._make = make
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], T] | None = None

    def get(self) -> T:
        """Raises `RuntimeError` outside a running event loop."""
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        if loop in self._by_loop:
            found = self._by_loop[loop]
        else:
            found = self._by_loop[loop] = self._make(loop)
        self._last = (weakref.ref(loop), found)
        return found
