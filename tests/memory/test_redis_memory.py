"""RedisMemory: lazy connection, atomic idempotent adds across clients, its key layout."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio
import redis.exceptions
from _memory_backends import REDIS_URL, open_redis

from eudaimon.core.messages import Message
from eudaimon.memory import RedisMemory
from eudaimon.memory._codec import message_from_json

pytestmark = pytest.mark.redis


async def test_construction_does_not_connect() -> None:
    """Lazy connection: building a RedisMemory never touches the network; the first use does,
    and an unreachable server is a connection error then."""
    memory = RedisMemory("redis://127.0.0.1:1/0", "nowhere")
    with pytest.raises(redis.exceptions.ConnectionError):
        await memory.get_messages()
    await memory.close()


async def test_two_clients_racing_store_each_message_once() -> None:
    """Atomic idempotency: two processes' clients feeding the same messages at once (a resumed
    run racing its predecessor) store each id exactly once, in one order both see."""
    first = await open_redis()
    assert isinstance(first.memory, RedisMemory)
    second = RedisMemory(REDIS_URL, first.memory.key)
    try:
        messages = [Message.user(f"m{i}", id=f"id-{i}") for i in range(50)]
        await asyncio.gather(
            *(first.memory.add_message(m, "t") for m in messages),
            *(second.add_message(m, "t") for m in reversed(messages)),
        )
        seen_first = await first.memory.get_messages("t")
        assert sorted(m.id for m in seen_first) == sorted(m.id for m in messages)
        assert await second.get_messages("t") == seen_first
    finally:
        await second.close()
        await first.close()


async def test_each_thread_is_a_list_of_json_messages_under_the_key() -> None:
    """Key layout: thread T of key K is the list K:T (the default thread K:) of JSON messages,
    readable by any client."""
    opened = await open_redis()
    memory = opened.memory
    assert isinstance(memory, RedisMemory)
    client = redis.asyncio.Redis.from_url(REDIS_URL)
    try:
        await memory.add_message(Message.user("hello", id="h"), "t")
        await memory.add_message(Message.user("default", id="d"))
        raw = await client.lrange(f"{memory.key}:t", 0, -1)
        assert [message_from_json(r) for r in raw] == [Message.user("hello", id="h")]
        assert await client.llen(f"{memory.key}:") == 1
    finally:
        await client.aclose()
        await opened.close()


def test_repr_hides_the_password() -> None:
    """No secrets in reprs: a URL's password is masked."""
    text = repr(RedisMemory("redis://user:s3cret@example.com:6379/0", "k"))
    assert "s3cret" not in text
    assert "user:***@example.com" in text
