"""Whole-group bookkeeping shared by the memory backends.

A provider rejects a tool result whose call is missing and a call whose results are missing, so
memory evicts and returns history in whole groups (`eudaimon.core.groups`): an assistant message
with tool calls together with its results, or any other single message. A group that is not
complete (results still arriving, a run that stopped mid-batch, a stray result) is held but not
returned until it is.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence

from eudaimon.core.groups import group_messages
from eudaimon.core.messages import Message, Role


def opens_group(message: Message) -> bool:
    """True for an assistant message whose tool results will follow it."""
    return message.role is Role.ASSISTANT and bool(message.tool_calls)


def is_complete(group: Sequence[Message]) -> bool:
    """A single non-tool message, or a tool-calling assistant message with exactly its results."""
    head = group[0]
    if head.role is Role.TOOL:
        return False
    if not opens_group(head):
        return len(group) == 1
    return Counter(c.id for c in head.tool_calls) == Counter(m.tool_call_id for m in group[1:])


def visible(messages: Sequence[Message]) -> list[Message]:
    """The messages of the complete groups, in order: what `get_messages` may return."""
    return [m for group in group_messages(messages) if is_complete(group) for m in group]


def drop_partial_head(messages: Sequence[Message]) -> list[Message]:
    """Drop the leading tool results of a window cut out of a longer history: their call lies
    before the cut, so their group is not whole in the window."""
    start = 0
    while start < len(messages) and messages[start].role is Role.TOOL:
        start += 1
    return list(messages[start:])


class _Group:
    __slots__ = ("messages", "weight")

    def __init__(self, message: Message, weight: int) -> None:
        self.messages = [message]
        self.weight = weight


class GroupWindow:
    """One thread's window: whole groups, the oldest evicted first while over `limit`.

    Each message weighs `weigh(message)` (1 for a message window, its tokens for a token
    window). The newest group is never evicted, so a single group heavier than the limit is
    kept whole. Ids of evicted messages are remembered, so re-adding one does nothing: a resumed
    run never brings an evicted message back. Adding costs O(1) amortized, whatever was added.
    """

    __slots__ = ("_groups", "_limit", "_weigh", "ids", "weight")

    def __init__(self, limit: int | None, weigh: Callable[[Message], int]) -> None:
        self._groups: deque[_Group] = deque()
        self._limit = limit
        self._weigh = weigh
        self.ids: set[str] = set()
        self.weight = 0
        """The total weight of the messages held."""

    def add(self, message: Message) -> None:
        """Append a message whose id is new, then evict the oldest groups while over the limit."""
        self.ids.add(message.id)
        weight = self._weigh(message)
        last = self._groups[-1] if self._groups else None
        if message.role is Role.TOOL and last is not None and opens_group(last.messages[0]):
            last.messages.append(message)
            last.weight += weight
        else:
            self._groups.append(_Group(message, weight))
        self.weight += weight
        if self._limit is not None:
            while self.weight > self._limit and len(self._groups) > 1:
                self.weight -= self._groups.popleft().weight

    def held(self) -> list[Message]:
        """Every message held, complete or not."""
        return [m for g in self._groups for m in g.messages]

    def visible(self) -> list[Message]:
        """The messages of the complete groups held."""
        return [m for g in self._groups if is_complete(g.messages) for m in g.messages]

    def __len__(self) -> int:
        return sum(len(g.messages) for g in self._groups)
