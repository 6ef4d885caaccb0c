"""Time and fresh ids: the runtime's only sources of non-determinism, kept in one place.

They enter the core as event fields, never the other way round.
"""

from __future__ import annotations

import secrets
import time
import uuid
from datetime import UTC, datetime


def now() -> datetime:
    return datetime.now(UTC)


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


def new_request_id() -> str:
    return f"req_{secrets.token_hex(8)}"


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"
