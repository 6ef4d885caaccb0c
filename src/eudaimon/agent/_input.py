"""What `prompt` accepts as input, checked before anything is journaled.

One function owns the rule, so a new kind of input (content parts) is one more case here.
"""

from __future__ import annotations

from collections.abc import Sequence

from eudaimon.core.messages import Message

ACCEPTED = "a str"
"""What `prompt`, `prompt_sync` and `prompt_stream` take as input, in the words errors use."""


def check_input(input: object) -> str:
    """`input` as the text a run starts from.

    Raises:
        TypeError: `input` is not something a prompt accepts; the message names what is.
    """
    if isinstance(input, str):
        return input
    raise TypeError(
        f"prompt input must be {ACCEPTED}, got {type(input).__name__}; "
        "to send a conversation you assembled, use prompt_with_messages([Message, …])"
    )


def check_messages(messages: Sequence[object]) -> list[Message]:
    """`messages` for `prompt_with_messages`, each a `Message`.

    Raises:
        TypeError: an item is not a `Message`; the message names its position and type.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError(f"prompt_with_messages takes a sequence of Message, got {type(messages).__name__}")
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(
                f"prompt_with_messages takes Message items; item {index} is a {type(message).__name__} "
                "(build one with Message.user(text), Message.assistant(text), …)"
            )
    return list(messages)  # type: ignore[arg-type]
