"""What crosses between the workflow and its activities, and how big content stays out of it.

Temporal keeps every activity's input and result in the workflow's history, and refuses a
payload over about 2 MB. So nothing here carries a run's history: a model request names the
run's messages by position in the journal (the activity folds them from the store), and any
string longer than `inline_limit` (a huge tool output, a long answer, a long message loaded
from memory) is stashed in the store and travels as a reference, `\\x00eudaimon:blob:<key>`.
The journal append resolves references before writing, so the store only ever holds content.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from eudaimon.core.messages import Message
from eudaimon.models.base import ChatResponse

INLINE_LIMIT = 256 * 1024
"""Strings longer than this (in characters) travel as store references."""

_MARK = "\x00eudaimon:blob:"


@dataclass(frozen=True, slots=True)
class LoadInput:
    run_id: str
    inline_limit: int = INLINE_LIMIT


@dataclass(frozen=True, slots=True)
class AppendInput:
    run_id: str
    expected_seq: int
    events: list[str]
    """Each event as its journal JSON, possibly holding blob references."""


@dataclass(frozen=True, slots=True)
class ModelInput:
    run_id: str
    seq: int
    """The request's history is the run's messages after event `seq`."""
    messages: list[Any]
    """`[start, end]` ranges of the run's messages, or a message (JSON) that is not one of them."""
    tools: list[Any] | None = None
    """None: the agent's own tool specs; else the specs sent (middleware changed them)."""
    temperature: float | None = None
    max_tokens: int | None = None
    inline_limit: int = INLINE_LIMIT


@dataclass(frozen=True, slots=True)
class ToolInput:
    run_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any]
    idempotency_key: str
    attempt: int
    inline_limit: int = INLINE_LIMIT
    step: int = 0


@dataclass(frozen=True, slots=True)
class DecisionInput:
    """A human's decision, sent as an Update: an approval, or a reconciliation."""

    call_id: str
    approved: bool | None = None
    output: str | None = None
    retry: bool = False
    by: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class RunInput:
    run_id: str
    agent: str
    """The agent's name: the worker maps it to the module that builds it."""
    inline_limit: int = INLINE_LIMIT
    tool_timeout_s: float = 3600.0
    model_timeout_s: float = 600.0
    heartbeat_timeout_s: float = 30.0
    read_attempts: int = 5
    """Attempts Temporal gives a READ or idempotent tool's activity (same idempotency key)."""
    extra: dict[str, Any] = field(default_factory=dict)


MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
RESPONSE: TypeAdapter[ChatResponse] = TypeAdapter(ChatResponse)


def is_ref(text: str) -> bool:
    return text.startswith(_MARK)


def blob_key(text: str) -> str:
    """Content-addressed: stashing the same text twice (a retried activity) writes one blob."""
    return "blob:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def ref_for(key: str) -> str:
    return _MARK + key


def key_of(ref: str) -> str:
    return ref[len(_MARK) :]


def to_refs(value: Any, limit: int, blobs: dict[str, str]) -> Any:
    """`value` (JSON) with every string longer than `limit` replaced by a reference; the
    content goes into `blobs` by key, for the caller to stash in the store."""
    if isinstance(value, str):
        if len(value) <= limit or is_ref(value):
            return value
        key = blob_key(value)
        blobs[key] = value
        return ref_for(key)
    if isinstance(value, dict):
        return {k: to_refs(v, limit, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [to_refs(v, limit, blobs) for v in value]
    return value


def resolve(value: Any, blobs: dict[str, str]) -> Any:
    """`value` (JSON) with every reference replaced by the content `blobs` holds for it."""
    if isinstance(value, str):
        return blobs[key_of(value)] if is_ref(value) else value
    if isinstance(value, dict):
        return {k: resolve(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, blobs) for v in value]
    return value


def refs_in(value: Any, found: set[str] | None = None) -> set[str]:
    """The blob keys a JSON value refers to."""
    found = set() if found is None else found
    if isinstance(value, str):
        if is_ref(value):
            found.add(key_of(value))
    elif isinstance(value, dict):
        for item in value.values():
            refs_in(item, found)
    elif isinstance(value, list):
        for item in value:
            refs_in(item, found)
    return found


def message_ranges(messages: Sequence[Message], journal: Sequence[Message]) -> list[Any]:
    """Name each request message by its position in the run's messages when it is one of them
    (the same object), else carry it whole: middleware may have added or rewritten some."""
    encoded: list[Any] = []
    position = 0
    for message in messages:
        found = -1
        for index in range(position, len(journal)):
            if journal[index] is message:
                found = index
                break
        if found < 0:
            encoded.append(MESSAGE.dump_python(message, mode="json"))
            continue
        last = encoded[-1] if encoded else None
        if isinstance(last, list) and last[1] == found:
            last[1] = found + 1
        else:
            encoded.append([found, found + 1])
        position = found + 1
    return encoded


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
