"""Each message's wire form, converted once per model and reused by every later step.

A run's history only grows, and every step sends all of it: converting it afresh each call made
a step's cost grow with the history. The cache is keyed by the message *object*, not by
`Message.id`: ids are not unique in the API (`Message.user("a", id="x")` and
`Message.user("b", id="x")` are both legal, `dataclasses.replace` keeps the id, and messages
without one have ""), whereas a frozen message object is the same content for as long as it
lives. The entry holds the message itself, so its `id()` cannot be reused by another object
while the entry exists, and a hit is checked with `is`: an equal-looking but different message
(say `{"n": 1}` and `{"n": 1.0}` as arguments, which compare equal but encode differently) is
converted on its own. The runtime keeps its history's message objects from step to step, so a
step converts only the messages that are new since the last one.

Bounded: at most `max_entries` messages and about `max_bytes` of wire form (the message objects
the entries keep alive are counted at their wire size); the oldest entries go first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from eudaimon.core.messages import Message

T = TypeVar("T")

DEFAULT_MAX_ENTRIES = 16_384
"""Messages remembered per model: a single history longer than this is converted every step."""
DEFAULT_MAX_BYTES = 32 * 1024 * 1024


class WireCache(Generic[T]):
    """`get(message)` is `convert(message)`, computed once per message object while it is kept."""

    __slots__ = ("_bytes", "_convert", "_entries", "_lock", "_max_bytes", "_max_entries", "_size", "conversions")

    def __init__(
        self,
        convert: Callable[[Message], T],
        size: Callable[[T], int],
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"WireCache needs room for one entry, got {max_entries=} {max_bytes=}")
        self._convert = convert
        self._size = size
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: dict[int, tuple[Message, T, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()  # a model may serve runs on several threads; hits take no lock
        self.conversions = 0
        """How many messages were converted (cache misses): what the reuse tests count."""

    def get(self, message: Message) -> T:
        entry = self._entries.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        value = self._convert(message)
        size = self._size(value)
        with self._lock:
            self.conversions += 1
            if size > self._max_bytes:
                return value  # one message larger than the whole cache: converted each time, not kept
            entries = self._entries
            old = entries.pop(id(message), None)  # another object at a recycled id(), or a racing thread's
            if old is not None:
                self._bytes -= old[2]
            while entries and (len(entries) >= self._max_entries or self._bytes + size > self._max_bytes):
                self._bytes -= entries.pop(next(iter(entries)))[2]
            entries[id(message)] = (message, value, size)
            self._bytes += size
        return value

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The wire bytes held (the bound `max_bytes` applies to)."""
        return self._bytes
