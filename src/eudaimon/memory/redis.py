"""`RedisMemory`: thread history in Redis, shared by every process and machine that uses the key.

Each thread is a Redis list of JSON messages at `key + ":" + thread` (the default thread is
`key + ":"`), with a set of its message ids at `key + ":" + thread + ":ids"`. One Lua script
adds a message: SADD the id, RPUSH the message only if the id was new. Redis runs a script
atomically, so two processes feeding the same run's messages never duplicate one. A batch (a
run's messages) is one MULTI/EXEC of such scripts: one round trip, applied all together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from eudaimon._extras import require
from eudaimon.core.messages import Message, Role
from eudaimon.core.redact import redact
from eudaimon.memory._codec import message_from_json, message_to_json
from eudaimon.memory._groups import drop_partial_head, opens_group, visible
from eudaimon.memory.base import check_window, thread_key, with_id

if TYPE_CHECKING:
    from redis.asyncio import Redis

_ADD = """
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[2])
    return 1
end
return 0
"""
_READ_BACK_CHUNK = 64


class RedisMemory:
    """Thread history in Redis lists, using redis-py's asyncio client.

    Construct it anywhere (`RedisMemory(url, key)` connects on first use), or `await
    RedisMemory.connect(url, key)` to fail fast when Redis is unreachable; `close()` it when
    done. Use one `key` per application or tenant; threads are namespaced under it.

    Args:
        url: A redis-py URL, e.g. `redis://127.0.0.1:6379/0`.
        key: The prefix of every key this memory writes.
        max_messages: If set, `get_messages` returns at most this many of the newest messages,
            in whole groups (more only when the newest group alone is larger). Everything stays
            stored either way, so adds stay idempotent; reads cost the window, not the history.
    """

    def __init__(self, url: str, key: str, *, max_messages: int | None = None) -> None:
        require("redis", "RedisMemory", "redis")
        check_window("max_messages", max_messages)
        self.url = url
        self.key = key
        self.max_messages = max_messages
        self._client: Redis | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        """The event loop `_client` belongs to: redis-py's connections cannot outlive theirs."""
        self._closer: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, url: str, key: str, *, max_messages: int | None = None) -> RedisMemory:
        """A memory whose connection is checked now (a PING), not at its first use."""
        memory = cls(url, key, max_messages=max_messages)
        try:
            await memory._redis().ping()
        except BaseException:
            await memory.close()
            raise
        return memory

    def _redis(self) -> Redis:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is not loop:
            # `prompt_sync` after `prompt_sync`: each `asyncio.run` has a loop of its own, and
            # the last one closed our client as it ended. Start a client on this loop.
            self._client = None
        if self._client is None:
            # Imported here: redis-py takes longer to import than the rest of eudaimon's
            # memory, and most programs never build a RedisMemory.
            from redis.asyncio import Redis

            self._client = Redis.from_url(self.url)
            self._loop = loop
            self._closer = loop.create_task(_close_with_loop(self._client), name="eudaimon-redis-memory-closer")
        return self._client

    def _keys(self, thread_id: str | None) -> tuple[str, str]:
        messages = f"{self.key}:{thread_key(thread_id)}"
        return messages, messages + ":ids"

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        messages_key, _ = self._keys(thread_id)
        client = self._redis()
        if self.max_messages is None:
            raw: list[bytes | str] = await client.lrange(messages_key, 0, -1)
            return visible([message_from_json(r) for r in raw])
        async with client.pipeline(transaction=True) as pipe:
            pipe.llen(messages_key)
            pipe.lrange(messages_key, -self.max_messages, -1)
            length, raw = await pipe.execute()
        tail = [message_from_json(r) for r in raw]
        kept = drop_partial_head(tail)
        if kept or not tail:
            return visible(kept)
        # The window lies inside the newest group: read back to its head. Positions from the
        # start stay valid while others append, so the reads need no lock.
        return visible(await self._newest_group(client, messages_key, int(length) - len(tail), tail))

    async def _newest_group(self, client: Redis, messages_key: str, start: int, tail: list[Message]) -> list[Message]:
        """The newest group, whose results `tail` (read from position `start`) all are."""
        while start > 0:
            begin = max(0, start - _READ_BACK_CHUNK)
            raw: list[bytes | str] = await client.lrange(messages_key, begin, start - 1)
            batch = [message_from_json(r) for r in raw]
            tail = batch + tail
            for index in range(len(batch) - 1, -1, -1):
                if batch[index].role is not Role.TOOL:
                    group = tail[index:]
                    return group if opens_group(group[0]) else []
            start = begin
        return []

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        await self.add_messages((message,), thread_id)

    async def add_messages(self, messages: Sequence[Message], thread_id: str | None = None) -> None:
        """`add_message` for each, in order, in one round trip: the add script once a message,
        in one MULTI/EXEC. The script's text rides along (EVAL, not EVALSHA): a pipeline of
        EVALSHA would first ask Redis whether it knows the script, a second round trip."""
        if not messages:
            return
        messages_key, ids_key = self._keys(thread_id)
        async with self._redis().pipeline(transaction=True) as pipe:
            for message in map(with_id, messages):
                pipe.eval(_ADD, 2, messages_key, ids_key, message.id, message_to_json(message))
            await pipe.execute()

    async def clear(self, thread_id: str | None = None) -> None:
        await self._redis().delete(*self._keys(thread_id))

    async def close(self) -> None:
        """Close the connection pool; a later use reconnects."""
        closer, self._closer, self._client = self._closer, None, None
        if closer is not None and self._loop is asyncio.get_running_loop():
            closer.cancel()
            await asyncio.gather(closer, return_exceptions=True)

    async def __aenter__(self) -> RedisMemory:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"RedisMemory({redact(self.url)!r}, {self.key!r}, max_messages={self.max_messages})"


async def _close_with_loop(client: Redis) -> None:
    """Wait until cancelled, then close `client`: by `close()`, or by the end of the loop.

    `asyncio.run` cancels every task before it closes its loop, so a client nobody closed is
    closed on its own loop, while it still runs; a closed loop could not close its sockets.
    """
    try:
        await asyncio.Event().wait()
    finally:
        await client.aclose()
