"""One turn of memory (`get_messages` then `add_message`) against how much is stored, per backend.

A run reads its thread's history once and feeds its new messages back, so this is the memory
work on every prompt. Window backends must cost the same with 100 or 10,000 messages stored;
the unbounded persistent backends (no `max_messages`) return everything, so theirs grows.
Redis is `$EUDAIMON_TEST_REDIS_URL` (default redis://127.0.0.1:6379/0).

Target: each window backend's turn with 10,000 messages stored ≤ 1.5 × its turn with 100
(both more than its window holds).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
REDIS_URL = os.environ.get("EUDAIMON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
Factory = Callable[[], Awaitable[tuple[Any, Callable[[], Awaitable[None]]]]]


def conversation(start: int, count: int) -> list[Any]:
    """`count` messages of a realistic thread: user turns, tool calls with results, answers."""
    from eudaimon.core.messages import Message, ToolCall

    out: list[Message] = []
    i = start
    while len(out) < count:
        kind = i % 4
        if kind == 0:
            out.append(Message.user(f"question {i}: " + "please look this up " * 4, id=f"m{i}"))
        elif kind == 1:
            out.append(Message.assistant(None, [ToolCall(f"c{i}", "search", {"query": f"q{i}"})], id=f"m{i}"))
        elif kind == 2:
            out.append(Message.tool(f"c{i - 1}", "result " * 20, id=f"m{i}"))
        else:
            out.append(Message.assistant("the answer is " + "forty-two " * 6, id=f"m{i}"))
        i += 1
    return out


async def _noop() -> None:
    return None


def factories(directory: Path, redis_url: str) -> dict[str, Factory]:
    import redis.asyncio

    from eudaimon.memory import Memory, RedisMemory, SlidingWindowMemory, SqliteMemory, SummaryMemory, TokenWindowMemory
    from eudaimon.models import FunctionModel

    summariser = FunctionModel(lambda request: "a summary of " + str(len(request.messages[-1].content)) + " chars")

    def in_process(make: Callable[[], Memory]) -> Factory:
        async def build() -> tuple[Memory, Callable[[], Awaitable[None]]]:
            return make(), _noop

        return build

    def sqlite(window: int | None, file: bool) -> Factory:
        async def build() -> tuple[Memory, Callable[[], Awaitable[None]]]:
            if file:
                memory = await SqliteMemory.open(directory / f"{uuid.uuid4().hex}.db", max_messages=window)
            else:
                memory = await SqliteMemory.in_memory(max_messages=window)
            return memory, memory.close

        return build

    def redis_memory(window: int | None) -> Factory:
        async def build() -> tuple[Memory, Callable[[], Awaitable[None]]]:
            key = f"eudaimon-bench:{uuid.uuid4().hex}"
            memory = await RedisMemory.connect(redis_url, key, max_messages=window)

            async def close() -> None:
                client = redis.asyncio.Redis.from_url(redis_url)
                names = [n async for n in client.scan_iter(match=f"{key}:*")]
                if names:
                    await client.delete(*names)
                await client.aclose()
                await memory.close()

            return memory, close

        return build

    return {
        "SlidingWindowMemory(50)": in_process(lambda: SlidingWindowMemory(50)),
        "TokenWindowMemory(2000)": in_process(lambda: TokenWindowMemory(2000)),
        "SummaryMemory(20, 10)": in_process(lambda: SummaryMemory(summariser)),
        "SqliteMemory file, max_messages=50": sqlite(50, True),
        "SqliteMemory :memory:, max_messages=50": sqlite(50, False),
        "RedisMemory, max_messages=50": redis_memory(50),
        "SqliteMemory file, unbounded": sqlite(None, True),
        "SqliteMemory :memory:, unbounded": sqlite(None, False),
        "RedisMemory, unbounded": redis_memory(None),
    }


async def per_turn_us(factory: Factory, stored: int, turns: int) -> float:
    """Mean µs of one `get_messages` + `add_message` on a thread holding `stored` messages.

    Small sizes use one thread per measured turn, so every turn really sees `stored` messages;
    large ones measure `turns` turns on one thread (at 10,000 stored it grows by 1%).
    """
    small = stored < 1000
    threads = [f"t{i}" for i in range(turns)] if small else ["t"]
    memory, close = await factory()
    try:
        history = conversation(0, stored)
        for thread in threads:
            for message in history:
                await memory.add_message(message, thread)
        fresh = conversation(stored, turns)
        await memory.get_messages(threads[0])  # warm-up: first-call costs are not per turn
        began = time.perf_counter()
        for turn in range(turns):
            thread = threads[turn % len(threads)]
            await memory.get_messages(thread)
            await memory.add_message(fresh[turn], thread)
        return (time.perf_counter() - began) / turns * 1e6
    finally:
        await close()


def measure(quick: bool) -> dict[str, Any]:
    h.requires("redis")
    sizes = [100, 1000] if quick else [100, 10000]
    figures: dict[str, Any] = {}
    with h.scratch("memory-") as directory:
        for name, factory in factories(directory, REDIS_URL).items():
            for n in sizes:
                figures[f"{name} / {n:,} stored µs/turn"] = h.run_on_thread(
                    lambda f=factory, n=n: per_turn_us(f, n, 40 if quick else 100)
                )
    figures["largest stored"] = sizes[-1]
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    large = f"{int(f['largest stored']):,}"
    out = []
    for key in [k for k in f if k.endswith(" / 100 stored µs/turn") and "unbounded" not in k]:
        name = key.rsplit(" / ", 1)[0]
        small, big = f[key], f[f"{name} / {large} stored µs/turn"]
        out.append(
            h.Target(
                f"{name}: turn flat in what is stored ({large} ÷ 100)", big / small, 1.5, f"{big:.0f} ÷ {small:.0f} µs"
            )
        )
    return out
