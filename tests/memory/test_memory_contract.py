"""The `Memory` contract, run against every backend (fixture `memory`, see conftest.py)."""

from __future__ import annotations

import asyncio

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


async def test_a_message_without_id_is_given_one(memory: Memory) -> None:
    """Bug: `await memory.add_message(Message.user("hi"))`, as the Daimon reference builds a
    message, raised for want of an id. Memory gives it a fresh id and keeps it; ids matter only
    for what the runtime journals, which always has them."""
    await memory.add_message(Message.user("no id"))
    await memory.add_message(Message.assistant("no id either"), "t")
    (stored,) = await memory.get_messages()
    assert (stored.role, stored.content) == ("user", "no id") and stored.id
    (other,) = await memory.get_messages("t")
    assert other.content == "no id either" and other.id and other.id != stored.id


async def test_a_batch_is_the_same_as_adding_one_at_a_time(memory: Memory) -> None:
    """Batches (`feed`, how the runtime adds a run's messages): order kept, and an id already
    held or repeated within the batch stored once, in the thread named."""
    held, answer = user("held"), Message.assistant("two", id="a-two")
    await memory.add_message(held, "t")
    await feed(memory, [user("one"), held, answer, user("one")], "t")
    assert await memory.get_messages("t") == [held, user("one"), answer]
    assert await memory.get_messages() == []


async def test_a_batch_with_a_message_without_id_keeps_every_message(memory: Memory) -> None:
    """A batch with an id-less message stores it (with a fresh id) in its place, in order."""
    await feed(memory, [user("first"), Message.user("no id"), user("last")])
    stored = await memory.get_messages()
    assert [m.content for m in stored] == ["first", "no id", "last"]
    assert stored[0] == user("first") and stored[1].id and stored[2] == user("last")


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
