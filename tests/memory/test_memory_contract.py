"""The `Memory` contract, run against every backend (fixture `memory`, see conftest.py)."""

from __future__ import annotations

import asyncio

import pytest
from _memory_backends import user

from eudaimon.core.messages import Message, ToolCall
from eudaimon.memory import Memory
from eudaimon.memory.base import feed


async def test_messages_come_back_in_the_order_added(memory: Memory) -> None:
    """Order: history is returned oldest first, exactly as added."""
    sent = [user("one"), Message.assistant("two", id="a-2"), user("three"), Message.assistant("four", id="a-4")]
    for message in sent:
        await memory.add_message(message)
    assert await memory.get_messages() == sent


async def test_threads_are_separate_namespaces(memory: Memory) -> None:
    """Thread scoping: a message added to one thread is seen by that thread only, and None is the
    default thread."""
    await memory.add_message(user("default"))
    await memory.add_message(user("in-a"), "a")
    await memory.add_message(user("in-b"), "b")
    assert await memory.get_messages() == [user("default")]
    assert await memory.get_messages(None) == [user("default")]
    assert await memory.get_messages("a") == [user("in-a")]
    assert await memory.get_messages("b") == [user("in-b")]
    assert await memory.get_messages("never-used") == []


async def test_adding_an_id_twice_stores_it_once(memory: Memory) -> None:
    """Idempotency by id: re-adding a stored message (a resumed run feeding its messages again)
    never duplicates history, even when other messages came in between."""
    first, second = user("first"), Message.assistant("second", id="a-second")
    for message in (first, second, first, second, first):
        await memory.add_message(message)
    assert await memory.get_messages() == [first, second]


async def test_the_same_id_in_two_threads_is_two_messages(memory: Memory) -> None:
    """Idempotency is per thread: one id may appear once in each thread."""
    message = user("shared")
    await memory.add_message(message, "a")
    await memory.add_message(message, "b")
    assert await memory.get_messages("a") == [message]
    assert await memory.get_messages("b") == [message]


async def test_concurrent_adds_of_one_id_store_it_once(memory: Memory) -> None:
    """Idempotency holds under concurrency: two feeders racing on the same messages store each once."""
    messages = [user(f"m{i}") for i in range(10)]
    await asyncio.gather(*(memory.add_message(m) for m in messages + messages))
    stored = await memory.get_messages()
    assert sorted(m.id for m in stored) == sorted(m.id for m in messages)


async def test_a_message_without_id_is_refused(memory: Memory) -> None:
    """Idempotency needs ids: a message without one is refused loudly, not stored unkeyed."""
    with pytest.raises(ValueError, match="non-empty id"):
        await memory.add_message(Message.user("no id"))
    assert await memory.get_messages() == []


async def test_a_batch_is_the_same_as_adding_one_at_a_time(memory: Memory) -> None:
    """Batches (`feed`, how the runtime adds a run's messages): order kept, and an id already
    held or repeated within the batch stored once, in the thread named."""
    held, answer = user("held"), Message.assistant("two", id="a-two")
    await memory.add_message(held, "t")
    await feed(memory, [user("one"), held, answer, user("one")], "t")
    assert await memory.get_messages("t") == [held, user("one"), answer]
    assert await memory.get_messages() == []


async def test_a_batch_with_a_message_without_id_adds_nothing(memory: Memory) -> None:
    """A batch is refused whole: no message of it is stored when one has no id."""
    with pytest.raises(ValueError, match="non-empty id"):
        await feed(memory, [user("first"), Message.user("no id"), user("last")])
    assert await memory.get_messages() == []


async def test_clear_empties_only_its_thread(memory: Memory) -> None:
    """Clear: the cleared thread is empty, other threads keep their history."""
    await memory.add_message(user("default"))
    await memory.add_message(user("kept"), "other")
    await memory.clear()
    assert await memory.get_messages() == []
    assert await memory.get_messages("other") == [user("kept")]
    await memory.clear("other")
    assert await memory.get_messages("other") == []


async def test_clear_forgets_ids(memory: Memory) -> None:
    """Clear forgets the thread's ids too, so a cleared thread can be fed again from scratch."""
    await memory.add_message(user("again"))
    await memory.clear()
    await memory.add_message(user("again"))
    assert await memory.get_messages() == [user("again")]


async def test_messages_round_trip_exactly(memory: Memory) -> None:
    """Round trip: tool calls (dict and raw-string arguments), tool_call_id, is_error, roles and
    ids come back equal to what was added."""
    sent = [
        Message.system("be brief", id="s"),
        Message.user("weather and time? ünïcødé ✓", id="u"),
        Message.assistant(
            "calling",
            [
                ToolCall("c1", "weather", {"city": "Paris", "days": [1, 2], "deep": {"x": None, "y": 1.5}}),
                ToolCall("c2", "clock", '{"tz": "Europe/Par'),
            ],
            id="a",
        ),
        Message.tool("c1", "sunny", id="t1"),
        Message.tool("c2", "invalid JSON arguments", is_error=True, id="t2"),
        Message.assistant("sunny, and I could not read the time", id="final"),
    ]
    for message in sent:
        await memory.add_message(message, "t")
    assert await memory.get_messages("t") == sent


async def test_every_backend_is_a_memory(memory: Memory) -> None:
    """The protocol: every backend satisfies `Memory`, so the Agent accepts any of them."""
    assert isinstance(memory, Memory)
