"""`History`: a request's messages, shared with the run until someone changes them.

A run's messages only ever grow, so the first `n` of them never change: a request can show
them without copying, which keeps a step's cost flat however long the run. The first
mutation (middleware injecting a message, say) gives the request its own copy, so nothing
done to a request can alter the run's journaled history.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence
from itertools import islice
from typing import overload

from eudaimon.core.messages import Message


class History(MutableSequence[Message]):
    __slots__ = ("_base", "_length", "_own")

    def __init__(self, base: list[Message], length: int | None = None) -> None:
        self._base = base
        self._length = len(base) if length is None else length
        self._own: list[Message] | None = None

    def _items(self) -> list[Message]:
        if self._own is None:
            self._own = self._base[: self._length]
        return self._own

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if self._own is not None:
            return self._own[index]
        if isinstance(index, slice):
            base = self._base
            return [base[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("history index out of range")
        return self._base[index]

    def __len__(self) -> int:
        return len(self._own) if self._own is not None else self._length

    def __iter__(self) -> Iterator[Message]:
        if self._own is not None:
            return iter(self._own)
        return islice(self._base, self._length)  # at C speed: a model walks it every step

    @overload
    def __setitem__(self, index: int, value: Message) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[Message]) -> None: ...

    def __setitem__(self, index: int | slice, value: Message | Iterable[Message]) -> None:
        self._items()[index] = value  # type: ignore[index,assignment]

    def __delitem__(self, index: int | slice) -> None:
        del self._items()[index]

    def insert(self, index: int, value: Message) -> None:
        self._items().insert(index, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"History({list(self)!r})"
