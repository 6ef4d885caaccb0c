"""Events as a persistent store keeps them: long texts and history messages by reference.

A thread's runs repeat one another. Every `run_started` carries the history memory supplied; a
final answer is both the last message and `run_completed.output`; a tool's output is both
`tool_completed.output` and, a turn later, a history message. Kept inline, a thread of N turns
would hold its history N times over. So a store keeps two content-addressed tables beside its
events, and this module turns events into rows that point into them, and back:

- **texts**: every string of `TEXT_MIN` characters or more in a message's content, a tool's
  output or a run's output, and the base64 data of every image or document part (of a message
  or a tool's result), stored once per distinct content and named by its digest: an image
  sent once and carried in every later turn's history is kept once;
- **messages**: the messages `run_started` carries, stored once per distinct message and
  numbered in the order first stored, so a history that grows a few messages per turn is a
  few ranges of numbers however long it gets.

The fold never sees any of this: `unpack` gives back the same events `pack` was given. Rows
written before packing existed (messages and texts inline) read back unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eudaimon.core.codec import event_from_dict, payload_dict, payload_json
from eudaimon.core.errors import CorruptEvent
from eudaimon.core.events import Event

TEXT_MIN = 512
"""Strings at least this long are stored once, by digest; shorter ones cost less inline."""

_TEXT = "$text"
_RANGES = "$ranges"
_OUTPUT_TYPES = frozenset({"tool_completed", "tool_reconciled", "run_completed"})
_JSON = json.JSONEncoder(separators=(",", ":"))
"""One compact encoder for every body: `json.dumps` with `separators` builds a new one per call."""

Row = tuple[int, str, str, str]
"""A stored event as read back: seq, at (ISO 8601), type, payload JSON."""


def digest(body: str) -> str:
    """The name of a stored text or message: 128 bits of BLAKE2b, plenty for content addressing."""
    return hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(slots=True)
class PackedBatch:
    """A batch of events ready to store: the texts and messages it needs, and its rows.

    Bodies are JSON documents, so any string (NUL and lone surrogates included) stores as
    ASCII text. A store inserts the `texts` and `messages` it lacks, numbering new messages in
    the order given, then asks `payloads(keys)` for the rows. For retention it also records
    which texts the events point to themselves (`direct_texts`), which text each message's
    content points to (`message_texts`), and which message numbers the run refers to.
    """

    texts: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    message_texts: dict[str, str | None] = field(default_factory=dict)
    direct_texts: list[str] = field(default_factory=list)
    """Every reference the events make to a text themselves, once per occurrence."""
    _payloads: list[dict[str, Any] | str] = field(default_factory=list)
    """Each event's payload: its JSON when nothing in it is stored apart, else a dict to encode."""
    _histories: dict[int, list[str]] = field(default_factory=dict)

    def payloads(self, keys: Mapping[str, int] | None = None) -> list[str]:
        """Each event's payload JSON; `keys` numbers every digest of `messages`."""
        keys = keys or {}
        rows: list[str] = []
        for index, payload in enumerate(self._payloads):
            if isinstance(payload, str):
                rows.append(payload)
                continue
            history = self._histories.get(index)
            if history is not None:
                payload = {**payload, "messages": {_RANGES: ranges(keys[d] for d in history)}}
            rows.append(_JSON.encode(payload))
        return rows

    def message_ranges(self, keys: Mapping[str, int]) -> list[tuple[int, int]]:
        """The message numbers the batch's `run_started` refers to, as disjoint (first, count)
        ranges: what the run keeps alive, whatever order or repeats its history has."""
        referenced = sorted({keys[d] for history in self._histories.values() for d in history})
        return [(first, count) for first, count in ranges(referenced)]


def pack(events: Sequence[Event]) -> PackedBatch:
    batch = PackedBatch()
    for index, event in enumerate(events):
        if event.type != "run_started":
            # Most events are short: JSON under `TEXT_MIN` characters holds no string that long,
            # so nothing in it is stored apart and pydantic's JSON is the row as it stands.
            try:
                short = payload_json(event.data)
            except ValueError:  # a lone surrogate: json.dumps below escapes it
                short = ""
            if short and len(short) < TEXT_MIN:
                batch._payloads.append(short)
                continue
        payload = payload_dict(event.data)
        if event.type == "run_started":
            history: list[str] = []
            for message in payload["messages"]:
                text = _pack_content(message, batch.texts)
                body = _JSON.encode(message)
                name = digest(body)
                batch.messages.setdefault(name, body)
                batch.message_texts[name] = text
                history.append(name)
            batch._histories[index] = history
            payload = {**payload, "messages": []}
        elif event.type == "model_called":
            _pack_content(payload["message"], batch.texts)
        elif event.type in _OUTPUT_TYPES and "output" in payload:
            payload["output"] = _pack_text(payload["output"], batch.texts)
            _pack_parts(payload.get("parts"), batch.texts)
        batch.direct_texts.extend(direct_text_refs(payload))
        batch._payloads.append(payload)
    return batch


def ranges(keys: Iterable[int]) -> list[list[int]]:
    """`[[first, count], …]` covering `keys` in order: consecutive numbers share one range."""
    out: list[list[int]] = []
    for key in keys:
        if out and out[-1][0] + out[-1][1] == key:
            out[-1][1] += 1
        else:
            out.append([key, 1])
    return out


@dataclass(slots=True)
class StoredRows:
    """One run's rows as loaded, before their references are resolved.

    A store reads the rows, then the messages `message_ranges` names, then the texts
    `text_digests` names (which may depend on the messages), then calls `events`.
    """

    run_id: str
    rows: list[tuple[int, str, str, dict[str, Any]]]
    _messages: dict[int, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def parse(cls, run_id: str, rows: Iterable[Row], after_seq: int = -1) -> StoredRows:
        parsed: list[tuple[int, str, str, dict[str, Any]]] = []
        expected = max(after_seq, -1) + 1
        for seq, at, tag, payload in rows:
            if seq != expected:
                raise CorruptEvent(run_id, expected, f"the journal has no seq {expected}; the next row is seq {seq}")
            parsed.append((seq, at, tag, _json_object(payload, run_id, seq, tag)))
            expected += 1
        return cls(run_id, parsed)

    def message_ranges(self) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        for seq, _, tag, payload in self.rows:
            if tag == "run_started":
                found.extend(self._ranges_of(seq, payload.get("messages")))
        return found

    def add_messages(self, bodies: Mapping[int, str]) -> None:
        for key, body in bodies.items():
            self._messages[key] = _json_object(body, self.run_id, -1, "message")

    def text_digests(self) -> set[str]:
        wanted: set[str] = set()
        for _, _, tag, payload in self.rows:
            wanted.update(direct_text_refs(payload))
            messages = payload.get("messages") if tag == "run_started" else None
            if isinstance(messages, list):
                for m in messages:
                    wanted.update(message_refs(m))
        for m in self._messages.values():
            wanted.update(message_refs(m))
        return wanted

    def events(self, texts: Mapping[str, str]) -> list[Event]:
        """The events, every reference resolved.

        Raises:
            CorruptEvent: a row names a message or text the store does not have, or does not parse.
        """
        out: list[Event] = []
        for seq, at, tag, payload in self.rows:
            fields = dict(payload)
            if tag == "run_started":
                messages = fields.get("messages")
                if isinstance(messages, dict):
                    messages = [self._message(seq, key) for key in self._keys(seq, messages)]
                if isinstance(messages, list):
                    fields["messages"] = [self._unpack_content(seq, tag, m, texts) for m in messages]
            elif tag == "model_called" and isinstance(fields.get("message"), dict):
                fields["message"] = self._unpack_content(seq, tag, fields["message"], texts)
            elif tag in _OUTPUT_TYPES and "output" in fields:
                fields["output"] = self._unpack_text(seq, tag, fields["output"], texts)
                if isinstance(fields.get("parts"), list):
                    fields["parts"] = self._unpack_parts(seq, tag, fields["parts"], texts)
            out.append(event_from_dict({**fields, "run_id": self.run_id, "seq": seq, "at": at, "type": tag}))
        return out

    def _ranges_of(self, seq: int, messages: object) -> list[tuple[int, int]]:
        if not isinstance(messages, dict):
            return []  # inline messages: nothing to fetch
        spans = messages.get(_RANGES)
        if not isinstance(spans, list) or not all(_is_span(s) for s in spans):
            raise CorruptEvent(self.run_id, seq, f"run_started.messages is not a list of ranges: {messages!r:.80}")
        return [(int(first), int(count)) for first, count in spans]

    def _keys(self, seq: int, messages: dict[str, Any]) -> list[int]:
        return [first + i for first, count in self._ranges_of(seq, messages) for i in range(count)]

    def _message(self, seq: int, key: int) -> dict[str, Any]:
        message = self._messages.get(key)
        if message is None:
            raise CorruptEvent(self.run_id, seq, f"message {key} is missing from the store", event_type="run_started")
        return message

    def _unpack_content(self, seq: int, tag: str, message: object, texts: Mapping[str, str]) -> object:
        if not isinstance(message, dict):
            return message
        if isinstance(message.get("content"), dict):
            message = {**message, "content": self._unpack_text(seq, tag, message["content"], texts)}
        if isinstance(message.get("parts"), list):
            message = {**message, "parts": self._unpack_parts(seq, tag, message["parts"], texts)}
        return message

    def _unpack_parts(self, seq: int, tag: str, parts: list[Any], texts: Mapping[str, str]) -> list[Any]:
        return [
            {**part, "data": self._unpack_text(seq, tag, part["data"], texts)}
            if isinstance(part, dict) and isinstance(part.get("data"), dict)
            else part
            for part in parts
        ]

    def _unpack_text(self, seq: int, tag: str, value: object, texts: Mapping[str, str]) -> object:
        if not isinstance(value, dict):
            return value
        name = value.get(_TEXT)
        body = texts.get(name) if isinstance(name, str) else None
        if body is None:
            raise CorruptEvent(self.run_id, seq, f"text {name!r} is missing from the store", event_type=tag)
        text = json.loads(body)
        if not isinstance(text, str):
            raise CorruptEvent(self.run_id, seq, f"text {name!r} is not a string", event_type=tag)
        return text


def _pack_text(value: object, texts: dict[str, str]) -> object:
    if not isinstance(value, str) or len(value) < TEXT_MIN:
        return value
    body = json.dumps(value)
    name = digest(body)
    texts.setdefault(name, body)
    return {_TEXT: name}


def _pack_content(message: dict[str, Any], texts: dict[str, str]) -> str | None:
    """Move a message's long content and its parts' data into `texts`; the digests it now
    points to, concatenated (what a store keeps beside the message), or None."""
    names: list[str] = []
    packed = _pack_text(message.get("content"), texts)
    if isinstance(packed, dict):
        message["content"] = packed
        names.append(str(packed[_TEXT]))
    names.extend(_pack_parts(message.get("parts"), texts))
    return "".join(names) or None


def _pack_parts(parts: object, texts: dict[str, str]) -> list[str]:
    """Move the data of image and document parts into `texts`; the digests, in order."""
    names: list[str] = []
    if isinstance(parts, list):
        for part in parts:
            packed = _pack_text(part.get("data"), texts) if isinstance(part, dict) else None
            if isinstance(packed, dict):
                part["data"] = packed
                names.append(str(packed[_TEXT]))
    return names


def split_names(joined: str) -> list[str]:
    """The digests `_pack_content` concatenated for one message (each 32 hex characters)."""
    return [joined[at : at + _NAME_HEX] for at in range(0, len(joined), _NAME_HEX)]


_NAME_HEX = 32


def direct_text_refs(payload: dict[str, Any]) -> list[str]:
    """The texts a stored payload points to itself, not through a message, once per occurrence:
    what deleting its event releases."""
    found = [_text_name(payload.get("output"))]
    found.extend(_parts_refs(payload.get("parts")))
    message = payload.get("message")
    if isinstance(message, dict):
        found.extend(message_refs(message))
    return [name for name in found if name]


def message_refs(message: object) -> list[str]:
    """The texts a stored message points to: its content's and its parts' data."""
    if not isinstance(message, dict):
        return []
    found = [_text_name(message.get("content")), *_parts_refs(message.get("parts"))]
    return [name for name in found if name]


def _parts_refs(parts: object) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [_text_name(part.get("data")) for part in parts if isinstance(part, dict) and _text_name(part.get("data"))]


def _text_name(value: object) -> str:
    name = value.get(_TEXT) if isinstance(value, dict) else None
    return name if isinstance(name, str) else ""


def _is_span(span: object) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in span)
        and span[1] > 0
    )


def _json_object(text: str | bytes, run_id: str, seq: int, tag: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise CorruptEvent(run_id, seq, f"invalid JSON: {exc}", event_type=tag) from exc
    if not isinstance(value, dict):
        raise CorruptEvent(run_id, seq, "the payload is not a JSON object", event_type=tag)
    return value


def uncovered(lo: int, hi: int, covered: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of `[lo, hi]` that no `[a, b]` of `covered` contains (all bounds inclusive):
    the messages a deleted run leaves that no other run refers to."""
    gaps: list[tuple[int, int]] = []
    start = lo
    for a, b in sorted(covered):
        if b < start:
            continue
        if a > hi:
            break
        if a > start:
            gaps.append((start, a - 1))
        start = max(start, b + 1)
        if start > hi:
            return gaps
    if start <= hi:
        gaps.append((start, hi))
    return gaps
