"""Messages to JSON and back, for the memory backends that store them outside the process.

One `TypeAdapter(Message)` serves every backend, so a message read back from SQLite or Redis
is equal to the one written: tool calls (with `arguments` a dict or the provider's raw string),
`tool_call_id`, `is_error` and `id` included.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from eudaimon.core.messages import Message

_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


def message_to_json(message: Message) -> str:
    """The message as one compact JSON object."""
    return _ADAPTER.dump_json(message).decode()


def message_from_json(text: str | bytes) -> Message:
    """A message written by `message_to_json`."""
    return _ADAPTER.validate_json(text)
