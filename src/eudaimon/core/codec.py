"""The journal's wire format: events to JSON and back.

One row is one JSON object: `{"v": 1, "run_id", "seq", "at", "type", ...payload fields}`.
This module is the only place that knows it. A missing field takes its default (old rows stay
readable); an unknown `type` or a row that does not parse raises an error naming the run, the
seq and the type, so a corrupt journal is never silently skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from eudaimon.core.errors import CorruptEvent, UnknownEventType
from eudaimon.core.events import EVENT_REGISTRY, Event, EventData
from eudaimon.core.state import RunState

VERSION = 1
_ENVELOPE = ("v", "run_id", "seq", "at", "type")
_ADAPTERS: dict[str, TypeAdapter[Any]] = {tag: TypeAdapter(cls) for tag, cls in EVENT_REGISTRY.items()}


def event_to_dict(event: Event) -> dict[str, Any]:
    payload: dict[str, Any] = _ADAPTERS[event.type].dump_python(event.data, mode="json")
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
    payload: dict[str, Any] = _ADAPTERS[data.type].dump_python(data, mode="json", exclude_defaults=True)
    return payload


def payload_json(data: EventData) -> str:
    """`payload_dict` as compact JSON, written by pydantic in one pass: several times as fast as
    `json.dumps` of the dict. Text outside ASCII is written as UTF-8 rather than escaped.

    Raises:
        ValueError: a string holds a lone surrogate, which UTF-8 cannot encode (`json.dumps`
            of `payload_dict` can: it escapes it).
    """
    return _ADAPTERS[data.type].serializer.to_json(data, exclude_defaults=True).decode()


def encoding_problem(data: EventData) -> str | None:
    """Why `data` would not read back once written, or None: the writer in strict mode, where
    a value that does not match its declared type is an error rather than a warning."""
    adapter = _ADAPTERS.get(data.type) if hasattr(data, "type") else None
    if adapter is None:
        return f"{type(data).__name__} is not an event payload"
    try:
        adapter.serializer.to_json(data, exclude_defaults=True, warnings="error")
    except PydanticSerializationError as exc:
        if "surrogate" not in str(exc):
            return _serialization_problem(exc)
        try:  # a lone surrogate: the stores escape it with json.dumps, which reads back
            json.dumps(adapter.dump_python(data, mode="json", warnings="error"))
        except (PydanticSerializationError, ValueError, TypeError, RecursionError) as again:
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
    adapter = _ADAPTERS.get(tag)
    if adapter is None:
        raise UnknownEventType(rid, at_seq, tag)
    fields = {k: v for k, v in row.items() if k not in _ENVELOPE}
    try:
        data = adapter.validate_python(fields)
        at = row["at"]
        return Event(rid, int(at_seq), at if isinstance(at, datetime) else datetime.fromisoformat(at), tag, data)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
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
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')} ({exc.error_count()} error(s))"
    return str(exc)


FOLD_VERSION = 6
"""Bumped whenever `RunState.apply` changes meaning: older snapshots are then ignored and rebuilt."""


@dataclass(frozen=True, slots=True)
class _SnapshotDoc:
    """A snapshot's JSON: `{"fold": FOLD_VERSION, "state": …}`."""

    fold: int
    state: RunState


# One adapter for the whole document, so pydantic's own (Rust) JSON reader and writer do the
# work: a 10,000-event run's snapshot decodes about twice as fast, and encodes about five
# times as fast, as json.loads/dumps around validate_python/dump_python did.
_SNAPSHOT: TypeAdapter[_SnapshotDoc] = TypeAdapter(_SnapshotDoc)


def state_to_json(state: RunState) -> str:
    return _SNAPSHOT.dump_json(_SnapshotDoc(FOLD_VERSION, state)).decode()


def state_from_json(text: str) -> RunState | None:
    """The state in a snapshot, or None when it was written by another fold version or is
    unreadable: snapshots are derived data, so the caller folds the events instead."""
    try:
        doc = _SNAPSHOT.validate_json(text)
    except (ValueError, TypeError, ValidationError):
        return None
    return doc.state if doc.fold == FOLD_VERSION else None
