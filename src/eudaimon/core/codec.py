"""The journal's wire format: events to JSON and back.

One row is one JSON object: `{"v": 1, "run_id", "seq", "at", "type", ...payload fields}`.
This module is the only place that knows it. A missing field takes its default (old rows stay
readable); an unknown `type` or a row that does not parse raises an error naming the run, the
seq and the type, so a corrupt journal is never silently skipped.

The events are plain dataclasses; pydantic's (Rust) reader and writer do the encoding, several
times as fast as `json` around hand-written conversions. They are built on the first encode or
decode, not at import: `eudaimon.core` imports nothing outside the standard library, so the fold
and the decisions load (and run in Temporal's sandbox) without pydantic being loaded for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from eudaimon.core.errors import CorruptEvent, UnknownEventType
from eudaimon.core.events import EVENT_REGISTRY, Event, EventData
from eudaimon.core.state import RunState

if TYPE_CHECKING:
    from pydantic import TypeAdapter

VERSION = 1
_ENVELOPE = ("v", "run_id", "seq", "at", "type")


@cache
def _adapters() -> dict[str, TypeAdapter[Any]]:
    """One pydantic adapter per event type, built once, on the first encode or decode."""
    from pydantic import TypeAdapter

    return {tag: TypeAdapter(cls) for tag, cls in EVENT_REGISTRY.items()}


def prepare() -> None:
    """Build the readers and writers now, not on the first event: a process that will use
    them (a fleet worker) pays their tenth of a second of CPU at its start, not inside the
    first workflow task it runs."""
    _adapters()
    _snapshot()


@cache
def _serialization_error() -> type[Exception]:
    from pydantic_core import PydanticSerializationError

    return PydanticSerializationError


def event_to_dict(event: Event) -> dict[str, Any]:
    payload: dict[str, Any] = _adapters()[event.type].dump_python(event.data, mode="json")
    return {
        "v": VERSION,
        "run_id": event.run_id,
        "seq": event.seq,
        "at": event.at.isoformat(),
        "type": event.type,
        **payload,
    }


def payload_dict(data: EventData) -> dict[str, Any]:
    """The payload alone as JSON-ready values, for stores that keep the envelope in columns.

    Fields at their defaults are left out: they read back as the same defaults, and a journal
    writes them millions of times (`is_error: false`, zero cached tokens, no cost)."""
    payload: dict[str, Any] = _adapters()[data.type].dump_python(data, mode="json", exclude_defaults=True)
    return payload


def payload_json(data: EventData) -> str:
    """`payload_dict` as compact JSON, written by pydantic in one pass: several times as fast as
    `json.dumps` of the dict. Text outside ASCII is written as UTF-8 rather than escaped.

    Raises:
        ValueError: a string holds a lone surrogate, which UTF-8 cannot encode (`json.dumps`
            of `payload_dict` can: it escapes it).
    """
    return _adapters()[data.type].serializer.to_json(data, exclude_defaults=True).decode()


def payload_from_json(event_type: str, text: str | bytes) -> EventData:
    """The payload `payload_json` wrote for an event of `event_type` (a store that keeps the
    envelope apart). Raises pydantic's `ValidationError` (a `ValueError`) if it does not read."""
    data: EventData = _adapters()[event_type].validate_json(text)
    return data


def encoding_problem(data: EventData) -> str | None:
    """Why `data` would not read back once written, or None: the writer in strict mode, where
    a value that does not match its declared type is an error rather than a warning."""
    adapter = _adapters().get(data.type) if hasattr(data, "type") else None
    if adapter is None:
        return f"{type(data).__name__} is not an event payload"
    serialization_error = _serialization_error()
    try:
        adapter.serializer.to_json(data, exclude_defaults=True, warnings="error")
    except serialization_error as exc:
        if "surrogate" not in str(exc):
            return _serialization_problem(exc)
        try:  # a lone surrogate: the stores escape it with json.dumps, which reads back
            json.dumps(adapter.dump_python(data, mode="json", warnings="error"))
        except (serialization_error, ValueError, TypeError, RecursionError) as again:
            return _serialization_problem(again)
    except (ValueError, TypeError, RecursionError) as exc:
        return _serialization_problem(exc)
    return None


def _serialization_problem(exc: BaseException) -> str:
    text = str(exc)
    if "Expected `" in text:  # pydantic's warning: "Expected `str` - serialized value may not be…"
        expected = text.split("Expected `", 1)[1].split("`", 1)[0]
        got = text.split("input_value=", 1)[1].split(",", 1)[0] if "input_value=" in text else "another value"
        return f"a value does not match its declared type (expected {expected}, got {got[:60]})"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def event_to_json(event: Event) -> str:
    return json.dumps(event_to_dict(event), separators=(",", ":"))


def event_from_dict(row: dict[str, Any], *, run_id: str | None = None, seq: int | None = None) -> Event:
    rid = str(row.get("run_id", run_id or "?"))
    at_seq = row.get("seq", seq if seq is not None else -1)
    tag = row.get("type")
    if not isinstance(tag, str):
        raise CorruptEvent(rid, at_seq, "the row has no 'type'")
    version = row.get("v", VERSION)
    if version != VERSION:
        raise CorruptEvent(
            rid, at_seq, f"format version {version!r} is not supported (expected {VERSION})", event_type=tag
        )
    adapter = _adapters().get(tag)
    if adapter is None:
        raise UnknownEventType(rid, at_seq, tag)
    fields = {k: v for k, v in row.items() if k not in _ENVELOPE}
    try:
        data = adapter.validate_python(fields)
        at = row["at"]
        return Event(rid, int(at_seq), at if isinstance(at, datetime) else datetime.fromisoformat(at), tag, data)
    except (KeyError, TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise CorruptEvent(rid, at_seq, _short(exc), event_type=tag) from exc


def event_from_json(text: str | bytes, *, run_id: str | None = None, seq: int | None = None) -> Event:
    try:
        row = json.loads(text)
    except ValueError as exc:
        raise CorruptEvent(run_id or "?", seq if seq is not None else -1, f"invalid JSON: {exc}") from exc
    if not isinstance(row, dict):
        raise CorruptEvent(run_id or "?", seq if seq is not None else -1, "the row is not a JSON object")
    return event_from_dict(row, run_id=run_id, seq=seq)


def _short(exc: Exception) -> str:
    from pydantic import ValidationError  # loaded already: the adapter that raised is pydantic's

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')} ({exc.error_count()} error(s))"
    return str(exc)


FOLD_VERSION = 8
"""Bumped whenever `RunState.apply` changes meaning: older snapshots are then ignored and rebuilt."""


@dataclass(frozen=True, slots=True)
class _SnapshotDoc:
    """A snapshot's JSON: `{"fold": FOLD_VERSION, "state": …}`."""

    fold: int
    state: RunState


@cache
def _snapshot() -> TypeAdapter[_SnapshotDoc]:
    """One adapter for the whole document, so pydantic's own (Rust) JSON reader and writer do
    the work: a 10,000-event run's snapshot decodes about twice as fast, and encodes about five
    times as fast, as json.loads/dumps around validate_python/dump_python did."""
    from pydantic import TypeAdapter

    return TypeAdapter(_SnapshotDoc)


def state_to_json(state: RunState) -> str:
    return _snapshot().dump_json(_SnapshotDoc(FOLD_VERSION, state)).decode()


def state_from_json(text: str) -> RunState | None:
    """The state in a snapshot, or None when it was written by another fold version or is
    unreadable: snapshots are derived data, so the caller folds the events instead."""
    try:
        doc = _snapshot().validate_json(text)
    except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
        return None
    return doc.state if doc.fold == FOLD_VERSION else None
