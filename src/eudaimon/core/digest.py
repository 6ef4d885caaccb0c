"""Content digests and idempotency keys: the same input gives the same hex, on any machine."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from enum import Enum
from typing import Any


def _default(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return repr(value)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal values digest equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_default, ensure_ascii=False)


def digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def idempotency_key(run_id: str, call_id: str) -> str:
    """The key a tool sees for a call; stable across retries, crashes and recovery."""
    return hashlib.sha256(f"{run_id}:{call_id}".encode()).hexdigest()


def specs_digest(specs: Sequence[Any]) -> str:
    """Names a set of tool specs (name, description, JSON Schema): equal specs, equal digest."""
    return digest([[s.name, s.description, s.parameters] for s in specs])
