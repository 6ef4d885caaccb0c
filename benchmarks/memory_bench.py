"""Cost of one turn of memory (`get_messages` then `add_message`) against how much is stored.

A run reads its thread's history once and feeds its new messages back, so this is the memory
work on every prompt. Window backends must cost the same with 10 or 10,000 messages stored;
the unbounded persistent backends (no `max_messages`) return everything, so theirs grows.

    .venv/bin/python benchmarks/memory_bench.py [--sizes 10,10000] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis.asyncio

from eudaimon.core.messages import Message, ToolCall
from eudaimon.memory import (
    Memory,
    RedisMemory,
    SlidingWindowMemory,
    SqliteMemory,
    SummaryMemory,
    TokenWindowMemory,
)
from eudaimon.models import FunctionModel

Factory = Callable[[], Awaitable[tuple[Memory, Callable[[], Awaitable[None]]]]]


def conversation(start: int, count: int) -> list[Message]:
    """`count` messages of a realistic thread: user turns, tool calls with results, answers."""
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


async def per_turn_us(factory: Factory, stored: int) -> float:
    """Mean µs of one `get_messages` + `add_message` on a thread holding `stored` messages.

    Small sizes use one thread per measured turn, so every turn really sees `stored` messages;
    large ones measure 200 turns on one thread (at 10,000 stored it grows by 2%).
    """
    small = stored < 1000
    turns = 200
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,10000", help="comma-separated numbers of messages stored first")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as directory:
        rows = []
        for name, factory in factories(Path(directory), args.redis_url).items():
            rows.append((name, [await per_turn_us(factory, n) for n in sizes]))
    width = max(len(name) for name, _ in rows)
    header = f"| {'backend':<{width}} | " + " | ".join(f"{f'{n:,} stored':>14}" for n in sizes) + " |"
    print(header)
    print("|" + "-" * (width + 2) + "|" + "|".join("-" * 16 for _ in sizes) + "|")
    for name, cells in rows:
        print(f"| {name:<{width}} | " + " | ".join(f"{c:>11,.0f} µs" for c in cells) + " |")


if __name__ == "__main__":
    asyncio.run(main())
