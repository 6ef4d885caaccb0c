"""What a prompt accepts, checked before anything is journaled.

`prompt(input)` takes a string or a list of content parts (`TextPart`, `ImagePart`,
`DocumentPart`; plain strings in the list are text parts). Anything else is a `TypeError`
naming what is accepted, raised before a guardrail runs or a thread is held. Caller-kept
history (`message_history=`) and the agent's deps are checked here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import PART_TYPES, DocumentPart, ImagePart, Message, Role, TextPart, parts_text

Part = TextPart | ImagePart | DocumentPart
PromptInput = str | Sequence[str | TextPart | ImagePart | DocumentPart]
"""What `prompt` accepts: text, or a list of parts."""

_ACCEPTED = "a string, or a list of TextPart, ImagePart and DocumentPart (strings in the list are text)"
_CONVERSATION = "; to send a conversation you assembled, use prompt_with_messages([Message, …])"


@dataclass(frozen=True, slots=True)
class UserInput:
    """A checked prompt input: its text (what guardrails and `run_started.input` see) and,
    when it has images or documents, all its parts in order."""

    text: str
    parts: tuple[Part, ...] = ()

    def with_text(self, text: str) -> UserInput:
        """The input after a guardrail rewrote its text: the text parts become one, first."""
        if text == self.text:
            return self
        if not self.parts:
            return UserInput(text)
        others = tuple(p for p in self.parts if not isinstance(p, TextPart))
        return UserInput(text, (TextPart(text=text), *others) if text else others)

    def message(self, id: str) -> Message:
        if not self.parts:
            return Message.user(self.text, id=id)
        return Message.user(self.parts, id=id)


def check_input(input: object) -> UserInput:
    """The prompt's input, checked.

    Raises:
        TypeError: `input` is neither a string nor a list of parts.
    """
    if isinstance(input, str):
        return UserInput(input)
    if isinstance(input, Sequence) and not isinstance(input, bytes | bytearray):
        parts: list[Part] = []
        for index, item in enumerate(input):
            if isinstance(item, str):
                parts.append(TextPart(text=item))
            elif isinstance(item, PART_TYPES):
                parts.append(item)
            else:
                raise TypeError(
                    f"prompt input item {index} is a {type(item).__name__}; the input must be {_ACCEPTED}{_CONVERSATION}"
                )
        if not any(not isinstance(p, TextPart) for p in parts):
            return UserInput(parts_text(parts))
        return UserInput(parts_text(parts), tuple(parts))
    raise TypeError(f"prompt input is a {type(input).__name__}; it must be {_ACCEPTED}{_CONVERSATION}")


def check_history(history: object) -> list[Message]:
    """Caller-kept history without its system messages (the agent's instructions replace them).

    Raises:
        TypeError: `history` is not a sequence of `Message`s.
    """
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise TypeError(f"message_history must be a list of Message, got {type(history).__name__}")
    kept: list[Message] = []
    for index, message in enumerate(history):
        if not isinstance(message, Message):
            raise TypeError(f"message_history[{index}] is a {type(message).__name__}, not a Message")
        if message.role is not Role.SYSTEM:
            kept.append(message)
    return kept


def check_deps(agent: str, deps_type: Any, deps: Any, call: str) -> None:
    """Refuse a run that lacks the deps its agent declares, before anything runs.

    Raises:
        ConfigurationError: `deps` is None, or not a `deps_type`, for an agent with a `deps_type`.
    """
    if deps_type is None:
        return
    name = getattr(deps_type, "__name__", repr(deps_type))
    if deps is None:
        raise ConfigurationError(
            f"agent {agent!r} declares deps_type={name}: pass deps=... to {call}. Deps are never "
            "journaled, so a resumed run needs them again"
        )
    try:
        wrong = isinstance(deps_type, type) and not isinstance(deps, deps_type)
    except TypeError:  # a protocol or an alias isinstance cannot check
        wrong = False
    if wrong:
        raise ConfigurationError(f"agent {agent!r} declares deps_type={name}, but deps is a {type(deps).__name__}")


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
