"""SqliteMemory: history survives the process, sessions are namespaces, windows read whole groups."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from _memory_backends import open_redis

from eudaimon.core.messages import Message, ToolCall
from eudaimon.memory import Memory, SqliteMemory
from eudaimon.memory._codec import message_from_json

HISTORY = [
    Message.user("what is 2+2?", id="u1"),
    Message.assistant(None, [ToolCall("c1", "add", {"a": 2, "b": 2}), ToolCall("c2", "log", "{not json")], id="a1"),
    Message.tool("c1", "4", id="t1"),
    Message.tool("c2", "bad arguments", is_error=True, id="t2"),
    Message.assistant("4", id="a2"),
]

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from eudaimon.core.messages import Message
    from eudaimon.memory import SqliteMemory
    from eudaimon.memory._codec import message_to_json

    async def main(path):
        async with await SqliteMemory.open(path) as memory:
            seen = await memory.get_messages("thread-1")
            await memory.add_message(Message.user("from the child", id="child-1"), "thread-1")
            await memory.add_message(Message.user("what is 2+2?", id="u1"), "thread-1")  # already there
            print(json.dumps([message_to_json(m) for m in seen]))

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_a_new_process_sees_the_same_messages(tmp_path: Path) -> None:
    """Persistence: a new process opening the file reads exactly the messages written, and what
    it adds (idempotently, a known id adds nothing) is seen when the first process reopens."""
    path = tmp_path / "memory.db"
    async with await SqliteMemory.open(path) as memory:
        for message in HISTORY:
            await memory.add_message(message, "thread-1")
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == 0, child.stderr
    assert [message_from_json(m) for m in json.loads(child.stdout)] == HISTORY
    async with await SqliteMemory.open(path) as reopened:
        assert await reopened.get_messages("thread-1") == [*HISTORY, Message.user("from the child", id="child-1")]


async def test_sessions_share_a_connection_but_not_history() -> None:
    """Session scoping: with_session_id gives a memory on the same connection whose threads are
    separate from every other session's, and keeps the window."""
    async with await SqliteMemory.in_memory(max_messages=3) as memory:
        alice = memory.with_session_id("alice")
        bob = memory.with_session_id("bob")
        await alice.add_message(Message.user("hi from alice", id="m"))
        await bob.add_message(Message.user("hi from bob", id="m"))
        assert [m.content for m in await alice.get_messages()] == ["hi from alice"]
        assert [m.content for m in await bob.get_messages()] == ["hi from bob"]
        assert await memory.get_messages() == []
        assert bob.max_messages == 3
        await bob.clear()
        assert [m.content for m in await alice.get_messages()] == ["hi from alice"]


async def test_a_closed_memory_says_so() -> None:
    """Honest errors: using a closed SqliteMemory raises naming it, rather than hanging."""
    memory = await SqliteMemory.in_memory()
    await memory.close()
    await memory.close()  # closing twice is harmless
    with pytest.raises(RuntimeError, match="is closed"):
        await memory.get_messages()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def test_a_window_inside_one_huge_group_returns_the_whole_group(backend: str) -> None:
    """Whole groups, persistent windows: when the newest group alone is longer than the window
    (150 results, window 10), a read goes back to the group's call and returns it whole."""
    calls = [ToolCall(f"c{i}", "fetch", {"page": i}) for i in range(150)]
    group = [
        Message.assistant(None, calls, id="a"),
        *(Message.tool(c.id, f"page {c.id}", id=f"t-{c.id}") for c in calls),
    ]
    if backend == "sqlite":
        sqlite = await SqliteMemory.in_memory(max_messages=10)
        memory: Memory = sqlite
        close: Callable[[], Awaitable[None]] = sqlite.close
    else:
        opened = await open_redis(window=10)
        memory, close = opened.memory, opened.close
    try:
        await memory.add_message(Message.user("read everything", id="u"))
        for message in group:
            await memory.add_message(message)
        assert await memory.get_messages() == group
        await memory.add_message(Message.assistant("done", id="done"))
        assert [m.id for m in await memory.get_messages()] == ["done"]
    finally:
        await close()
