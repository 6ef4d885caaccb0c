"""Feeding memory: a run's messages go in as one batch (one transaction, one round trip) where
the backend takes batches, and one at a time where it does not."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _memory_backends import user

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.memory import SlidingWindowMemory, SqliteMemory
from eudaimon.memory.base import feed, thread_key
from eudaimon.models import ScriptedModel


class BatchRecorder(SlidingWindowMemory):
    """A window memory that notes every batch it is fed."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    async def add_messages(self, messages: Sequence[Message], thread_id: str | None = None) -> None:
        self.batches.append([m.content for m in messages])
        await super().add_messages(messages, thread_id)


class OneAtATime:
    """A memory with only the three methods of the `Memory` protocol."""

    def __init__(self) -> None:
        self.threads: dict[str, list[Message]] = {}

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        return list(self.threads.get(thread_key(thread_id), []))

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        held = self.threads.setdefault(thread_key(thread_id), [])
        if all(m.id != message.id for m in held):
            held.append(message)

    async def clear(self, thread_id: str | None = None) -> None:
        self.threads.pop(thread_key(thread_id), None)


@tool(effect="read")
async def lookup(ctx: ToolContext, key: str) -> str:
    """Look `key` up."""
    return f"value of {key}"


def _script() -> list[Message | str]:
    return [
        Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": "a"})]),
        Message.assistant(tool_calls=[ToolCall("c2", "lookup", {"key": "b"})]),
        "done",
    ]


async def test_a_run_feeds_memory_its_messages_in_one_batch() -> None:
    """Invariant: a finished run's own messages reach memory in one call, in order, without the
    system prompt."""
    memory = BatchRecorder()
    agent = Agent(ScriptedModel(_script()), tools=[lookup], memory=memory, system_prompt="sys")
    await agent.prompt("find", thread_id="t")
    assert memory.batches == [["find", "", "value of a", "", "value of b", "done"]]
    assert [m.content for m in await memory.get_messages("t")] == memory.batches[0]


async def test_a_memory_without_batches_is_fed_one_message_at_a_time() -> None:
    """Invariant: a backend with only the `Memory` protocol's methods still gets every message."""
    memory = OneAtATime()
    agent = Agent(ScriptedModel(_script()), tools=[lookup], memory=memory)
    await agent.prompt("find", thread_id="t")
    assert [m.content for m in await memory.get_messages("t")] == ["find", "", "value of a", "", "value of b", "done"]


async def test_a_sqlite_batch_is_one_transaction(tmp_path: Path) -> None:
    """Invariant: SqliteMemory commits a batch once, not once a message."""
    memory = await SqliteMemory.open(tmp_path / "memory.db")
    statements: list[str] = []
    try:
        await memory._db.run(lambda connection: connection.set_trace_callback(statements.append))
        await feed(memory, [user(f"m{i}") for i in range(5)], "t")
        assert [s for s in statements if s.split()[0] in ("BEGIN", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"]
        assert [m.content for m in await memory.get_messages("t")] == [f"m{i}" for i in range(5)]
    finally:
        await memory.close()
