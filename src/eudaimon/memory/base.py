"""The `Memory` contract: which history a new run of a thread is sent.

Memory is fed from committed journal events, never from in-flight state, and keyed by message
id: `add_message` of a message whose id the thread already holds does nothing. That is what lets
a run that crashed and resumed feed its messages again without duplicating the thread's history.
A message built without an id (`Message.user("hi")`, as the Daimon reference writes it) is
given a fresh one: ids matter for what the runtime journals, which always has them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from eudaimon.core.messages import Message

DEFAULT_THREAD = ""
"""The key of the memory's default thread (`thread_id=None`); `""` names the same thread."""


@runtime_checkable
class Memory(Protocol):
    """Conversation history, scoped by thread.

    Contract, kept by every backend:
    - `get_messages` returns the thread's history oldest first, as whole groups: never a tool
      result without the assistant message that called it, nor a call whose results are missing.
    - `add_message` is idempotent by `message.id`: a second add of the same id in the same
      thread does nothing. A message without an id is given a fresh one, so adding it twice
      stores it twice.
    - `clear` forgets the thread's messages and ids; other threads are untouched.
    - `thread_id=None` is the memory's default thread.

    A backend may also offer `add_messages(messages, thread_id=None)`: `add_message` for each,
    in order, in one call (one transaction, one round trip). The runtime feeds a run's
    messages through `feed`, which uses it where it exists.
    """

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        """The history a new run of `thread_id` should be sent, oldest first."""
        ...

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        """Store `message` in `thread_id` unless a message with its id is already there."""
        ...

    async def clear(self, thread_id: str | None = None) -> None:
        """Forget every message (and id) of `thread_id`."""
        ...


async def feed(memory: Memory, messages: Sequence[Message], thread_id: str | None = None) -> None:
    """Add `messages` in order: in one `add_messages` call where the backend has it, else one
    `add_message` at a time."""
    add_messages = getattr(memory, "add_messages", None)
    if add_messages is not None:
        await add_messages(messages, thread_id)
        return
    for message in messages:
        await memory.add_message(message, thread_id)


def thread_key(thread_id: str | None) -> str:
    """The storage key of a thread: `None` is the default thread."""
    return DEFAULT_THREAD if thread_id is None else thread_id


def with_id(message: Message) -> Message:
    """`message`, or a copy with a fresh id when it has none: memory keys every message by id."""
    return message if message.id else replace(message, id=f"mem-{uuid.uuid4().hex}")


def check_window(name: str, value: int | None) -> None:
    """Refuse a window size that could hold nothing."""
    if value is not None and value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
