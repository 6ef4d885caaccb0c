"""TokenWindowMemory: counts tokens with the estimate or a given counter, reports its load."""

from __future__ import annotations

import importlib.util

import pytest

from eudaimon.core.groups import estimate_tokens
from eudaimon.core.messages import Message
from eudaimon.memory import TokenWindowMemory, tiktoken_counter


async def test_current_tokens_follows_the_window() -> None:
    """current_tokens reports what the window holds, by the default ~4 chars/token estimate."""
    memory = TokenWindowMemory(10)
    first = Message.user("x" * 16, id="1")  # 4 tokens
    second = Message.user("y" * 20, id="2")  # 5 tokens
    third = Message.user("z" * 8, id="3")  # 2 tokens
    for message in (first, second, third):
        await memory.add_message(message)
    assert await memory.current_tokens() == 7
    assert await memory.get_messages() == [second, third]
    assert await memory.current_tokens("empty") == 0
    assert estimate_tokens(first) == 4


async def test_a_custom_counter_decides() -> None:
    """Pluggable tokenizer: the window obeys the counter it was given."""
    memory = TokenWindowMemory(3, token_counter=lambda m: len(m.content.split()))
    for i, text in enumerate(["a b", "c", "d e f"]):
        await memory.add_message(Message.user(text, id=str(i)))
    assert [m.content for m in await memory.get_messages()] == ["d e f"]


async def test_a_message_over_the_budget_is_kept() -> None:
    """The latest exchange is never evicted: one message over the budget stays alone."""
    memory = TokenWindowMemory(2)
    await memory.add_message(Message.user("short", id="1"))
    await memory.add_message(Message.user("a long message " * 10, id="2"))
    assert [m.id for m in await memory.get_messages()] == ["2"]


def test_tiktoken_counter_or_a_clear_import_error() -> None:
    """tiktoken is optional: without it, tiktoken_counter says how to install it."""
    if importlib.util.find_spec("tiktoken") is None:
        with pytest.raises(ImportError, match=r"pip install -e '\.\[tiktoken\]'"):
            tiktoken_counter()
    else:
        assert tiktoken_counter("gpt-4o")(Message.user("hello world", id="1")) >= 1
