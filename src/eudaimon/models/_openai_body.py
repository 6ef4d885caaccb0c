"""The request body of a Chat Completions call, as JSON bytes built from cached pieces.

Each message's JSON is encoded once (`WireCache`) and a body is those pieces joined, so a
step's conversion costs the messages new since the last step, not the whole history. The body
goes to the SDK as raw content: its `create()` would walk every message again against the
request's TypedDicts (`maybe_transform`, which for these parameters changes nothing and costs
about as much as the HTTP call), and encode them again.

The JSON is the SDK's own (`ensure_ascii=False`, compact separators, no NaN), so the server
receives what `create()` would have sent, fields in another order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from eudaimon.core.messages import Message, Role
from eudaimon.models._openai_convert import wire_message
from eudaimon.models._wire_cache import WireCache

Encoded = tuple[bytes, tuple[bytes, ...], bool]
"""A message's JSON, the JSON of the media parts it attaches to the next user turn, and whether
it is a tool result (a run of tool results shares one attachment turn)."""

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> bytes:
    """JSON as the OpenAI SDK encodes a body."""
    return _ENCODER.encode(value).encode("utf-8")


def encode_message(message: Message) -> Encoded:
    one, media = wire_message(message)
    return dumps(one), tuple(dumps(part) for part in media), message.role is Role.TOOL


def _size(encoded: Encoded) -> int:
    return len(encoded[0]) + sum(len(m) for m in encoded[1])


def message_cache() -> WireCache[Encoded]:
    """A model's cache of encoded messages."""
    return WireCache(encode_message, _size)


def encode_messages(messages: Iterable[Message], cache: WireCache[Encoded]) -> bytes:
    """The `messages` array as JSON: `to_openai_messages(messages)`, encoded, from the cache."""
    out: list[bytes] = []
    attached: list[bytes] = []
    get = cache.get
    for message in messages:
        wire, media, is_tool = get(message)
        if attached and not is_tool:
            out.append(b'{"role":"user","content":[' + b",".join(attached) + b"]}")
            attached = []
        out.append(wire)
        if media:
            attached.extend(media)
    if attached:
        out.append(b'{"role":"user","content":[' + b",".join(attached) + b"]}")
    return b"[" + b",".join(out) + b"]"


def request_body(params: Mapping[str, Any], messages: Iterable[Message], cache: WireCache[Encoded]) -> bytes:
    """The whole body: `params` (everything but the messages, `extra_body` already merged over
    them as the SDK merges it) with the encoded messages, unless `extra_body` replaced them."""
    if "messages" in params:
        return dumps(dict(params))
    head = dumps(dict(params))
    if head == b"{}":
        return b'{"messages":' + encode_messages(messages, cache) + b"}"
    return b'{"messages":' + encode_messages(messages, cache) + b"," + head[1:]
