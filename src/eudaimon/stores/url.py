"""Store URLs: `memory:`, `sqlite:///path.db`, `postgresql://…`."""

from __future__ import annotations

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.redact import redact
from eudaimon.stores.base import EventStore


def open_store(url: str, *, read_only: bool = False) -> EventStore:
    """The store a URL names. Relative SQLite paths (`sqlite:///runs.db`) are relative to the cwd;
    `sqlite:////abs/path.db` is absolute.

    With `read_only`, a SQLite or PostgreSQL journal is opened for reading only: a missing file
    or schema is an error, never a new journal, a read-only file can be read, and writes are
    refused (the memory store ignores the flag)."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "memory":
        from eudaimon.stores.memory import MemoryStore

        return MemoryStore()
    if scheme == "sqlite":
        path = url[len("sqlite:") :]
        if path.startswith("///"):
            path = path[3:]
        elif path.startswith("//"):
            raise ConfigurationError(
                f"SQLite URL {redact(url)!r} has a host part; write sqlite:///relative.db or sqlite:////abs.db"
            )
        if not path:
            raise ConfigurationError("a SQLite store URL needs a path: sqlite:///runs.db")
        from eudaimon.stores.sqlite import SqliteStore

        return SqliteStore(path, read_only=read_only)
    if scheme in ("postgresql", "postgres"):
        from eudaimon.stores.postgres import PostgresStore

        return PostgresStore(url, read_only=read_only)
    raise ConfigurationError(
        f"unsupported store URL {redact(url)!r}; use 'memory:', 'sqlite:///path.db' or 'postgresql://user@host/db'"
    )
