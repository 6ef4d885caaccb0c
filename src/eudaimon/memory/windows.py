"""In-process windows: the most recent messages by count or by tokens, evicted in whole groups.

Both keep history in the process only (it is lost with it); the journal stays the durable
record. Adding costs O(1) amortized and reading is proportional to the window, never to the
number of messages a thread has seen.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence

from eudaimon._extras import needs
from eudaimon.core.groups import TokenCounter, estimate_tokens
from eudaimon.core.messages import Message
from eudaimon.memory._groups import GroupWindow
from eudaimon.memory.base import check_window, thread_key, with_id


class _WindowMemory:
    """Threads of `GroupWindow`s; subclasses choose the limit and what a message weighs."""

    def __init__(self, limit: int, weigh: Callable[[Message], int]) -> None:
        self._limit = limit
        self._weigh = weigh
        self._threads: dict[str, GroupWindow] = {}

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        window = self._threads.get(thread_key(thread_id))
        return window.visible() if window is not None else []

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        await self.add_messages((message,), thread_id)

    async def add_messages(self, messages: Sequence[Message], thread_id: str | None = None) -> None:
        """`add_message` for each, in order."""
        if not messages:
            return
        key = thread_key(thread_id)
        window = self._threads.get(key)
        if window is None:
            window = self._threads[key] = GroupWindow(self._limit, self._weigh)
        for message in map(with_id, messages):
            if message.id not in window.ids:
                window.add(message)

    async def clear(self, thread_id: str | None = None) -> None:
        self._threads.pop(thread_key(thread_id), None)


def _one(_: Message) -> int:
    return 1


class SlidingWindowMemory(_WindowMemory):
    """The most recent `n` messages of each thread (default 50).

    Whole groups leave together from the oldest end, so a window may hold slightly fewer than
    `n`; it holds more only when the newest group alone is larger than `n`, and then it holds
    just that group, since evicting part of it would orphan tool results.
    """

    def __init__(self, n: int = 50) -> None:
        check_window("n", n)
        super().__init__(n, _one)
        self.n = n

    def __repr__(self) -> str:
        return f"SlidingWindowMemory(n={self.n})"


class TokenWindowMemory(_WindowMemory):
    """The most recent messages of each thread that fit `budget` tokens.

    `token_counter(message)` counts a message's tokens; the default is the ~4 characters a
    token heuristic (`eudaimon.core.groups.estimate_tokens`); `tiktoken_counter()` is exact for
    OpenAI models. Whole groups are evicted, oldest first; a single group over the budget is
    kept, since the model must see at least the latest exchange.
    """

    def __init__(self, budget: int, token_counter: TokenCounter | None = None) -> None:
        check_window("budget", budget)
        super().__init__(budget, token_counter or estimate_tokens)
        self.budget = budget

    async def current_tokens(self, thread_id: str | None = None) -> int:
        """The tokens the thread's window holds now (an unfinished tool group included)."""
        window = self._threads.get(thread_key(thread_id))
        return window.weight if window is not None else 0

    def __repr__(self) -> str:
        return f"TokenWindowMemory(budget={self.budget})"


def tiktoken_counter(model: str = "gpt-4o") -> TokenCounter:
    """A token counter using tiktoken's encoding for `model`, for `TokenWindowMemory`.

    Counts the content and each tool call's name and arguments, like the default estimate.

    Raises:
        MissingExtra: tiktoken is not installed (an ImportError too).
    """
    # Without it, pass your own token_counter, or none for the ~4 characters a token estimate.
    with needs("tiktoken", "tiktoken_counter"):
        tiktoken = importlib.import_module("tiktoken")
    encoding = tiktoken.encoding_for_model(model)

    def count(message: Message) -> int:
        parts = [message.content]
        for call in message.tool_calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            parts += [call.name, arguments]
        return max(1, sum(len(encoding.encode(p)) for p in parts if p))

    return count
