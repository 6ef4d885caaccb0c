"""Real memory backends for the memory tests: in-process windows, SQLite files, a live Redis.

Helpers only; the fixtures are in conftest.py.

Redis is at `EUDAIMON_TEST_REDIS_URL` (default `redis://127.0.0.1:6379/0`). CI starts it, so a
Redis test that cannot reach it fails with a message saying so; it never skips. Each Redis
memory gets its own key prefix, deleted when the test ends.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis.asyncio
import redis.exceptions

from eudaimon.core.messages import Message
from eudaimon.memory import (
    Memory,
    RedisMemory,
    SlidingWindowMemory,
    SqliteMemory,
    SummaryMemory,
    TokenWindowMemory,
)
from eudaimon.models import ChatRequest, FunctionModel

REDIS_URL = os.environ.get("EUDAIMON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

BACKENDS = ("sliding", "token", "summary", "sqlite-file", "sqlite-memory", "redis")
"""Every backend; each keeps the whole `Memory` contract."""
WINDOWED = ("sliding", "token", "sqlite-file", "sqlite-memory", "redis")
"""Backends that take a window size (for `token`, a budget with one token a message)."""


def backend_params(kinds: tuple[str, ...]) -> list[object]:
    return [pytest.param(k, id=k, marks=pytest.mark.redis) if k == "redis" else pytest.param(k, id=k) for k in kinds]


def summarising_model() -> FunctionModel:
    """A summary model that names how much it was asked to fold, so tests can read it back."""

    def summarise(request: ChatRequest) -> str:
        lines = request.messages[-1].content.count("\n")
        return f"summary of {lines} line(s)"

    return FunctionModel(summarise, model_id="summariser")


@dataclass
class Opened:
    memory: Memory
    close: Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


async def open_backend(kind: str, directory: Path, *, window: int | None = None) -> Opened:
    """A fresh, empty memory of `kind`; `window` bounds the windowed ones (else a roomy default)."""
    if kind == "sliding":
        return Opened(SlidingWindowMemory(window or 50), _nothing)
    if kind == "token":
        if window is None:
            return Opened(TokenWindowMemory(100_000), _nothing)
        return Opened(TokenWindowMemory(window, token_counter=lambda _: 1), _nothing)
    if kind == "summary":
        return Opened(SummaryMemory(summarising_model()), _nothing)
    if kind == "sqlite-file":
        sqlite = await SqliteMemory.open(directory / f"memory-{uuid.uuid4().hex}.db", max_messages=window)
        return Opened(sqlite, sqlite.close)
    if kind == "sqlite-memory":
        sqlite = await SqliteMemory.in_memory(max_messages=window)
        return Opened(sqlite, sqlite.close)
    if kind == "redis":
        return await open_redis(window=window)
    raise AssertionError(f"unknown backend {kind!r}")


async def open_redis(*, window: int | None = None, key: str | None = None) -> Opened:
    """A `RedisMemory` under a fresh key prefix, deleted (with every thread under it) on close."""
    key = key or f"eudaimon-test:{uuid.uuid4().hex}"
    try:
        memory = await RedisMemory.connect(REDIS_URL, key, max_messages=window)
    except (redis.exceptions.ConnectionError, OSError) as exc:
        pytest.fail(
            f"Redis is not reachable at {REDIS_URL} ({exc}). The Redis memory tests need a live server: "
            "start one (redis-server) or point EUDAIMON_TEST_REDIS_URL at one. CI starts Redis, so these "
            "tests fail rather than skip.",
            pytrace=False,
        )

    async def close() -> None:
        await delete_prefix(key)
        await memory.close()

    return Opened(memory, close)


async def delete_prefix(key: str) -> None:
    client = redis.asyncio.Redis.from_url(REDIS_URL)
    try:
        names = [name async for name in client.scan_iter(match=f"{key}:*")]
        if names:
            await client.delete(*names)
    finally:
        await client.aclose()


def user(text: str, id: str | None = None) -> Message:
    return Message.user(text, id=id or f"u-{text}")
