"""`Datasource(url)`: a database a tool writes to, and the table that says which calls committed.

The contract, for one call: `transaction(...)` opens a connection inside a transaction, the tool
writes through it, `commit(...)` adds the completion record and commits the whole. The record's
key is (run, call): a second commit of the same call (a stale process woken after another took
its run over) violates it, and its transaction rolls back whole, the tool's writes with it.
`lookup(...)` is what recovery asks: committed (the stored result) or not (run it again).

Secrets in the URL are never shown: `repr`, errors and the journal see it masked.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from eudaimon.core.errors import ConfigurationError
from eudaimon.datasources._postgres import PostgresBackend
from eudaimon.datasources._record import Backend, DatasourceError, StoredCompletion
from eudaimon.datasources._sqlite import SqliteBackend


class Datasource:
    """A database that tools write to in one transaction with their completion record.

    `"postgresql://user:secret@host/db"` (psycopg 3; an async tool gets an `AsyncConnection`,
    a sync one a `Connection`) or `"sqlite:///path/to/file.db"` (sqlite3, for both). The
    database may be the journal's own or another. Connections are opened when first needed
    and kept for the next call.
    """

    def __init__(self, url: str) -> None:
        scheme = url.split(":", 1)[0].lower()
        if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
            self.kind = "postgresql"
            self._backend: Backend = PostgresBackend(_plain_postgres(url), self.error)
        elif scheme == "sqlite":
            path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
            if not path:
                raise ConfigurationError(f"a SQLite datasource is 'sqlite:///path/to/file.db', got {mask(url)!r}")
            self.kind = "sqlite"
            self._backend = SqliteBackend(path, self.error)
        else:
            raise ConfigurationError(
                f"unknown datasource URL {mask(url)!r}: use 'postgresql://…' or 'sqlite:///path/to/file.db'"
            )
        self.url = mask(url)
        """The URL with its password masked: what may be shown."""
        self._secret = urlsplit(url).password or ""

    def __repr__(self) -> str:
        return f"Datasource({self.url!r})"

    def scrub(self, text: str) -> str:
        """`text` without the URL's password (a driver's error message may quote it)."""
        return text.replace(self._secret, "**********") if self._secret else text

    def error(self, doing: str, exc: BaseException) -> DatasourceError:
        """A `DatasourceError` for `exc`, its message scrubbed of the password."""
        return DatasourceError(self.scrub(f"datasource {self.url}: {doing} failed: {type(exc).__name__}: {exc}"))

    async def transaction(self, *, is_async: bool) -> Any:
        """A connection inside a new transaction (an async one for an async tool on PostgreSQL)."""
        return await self._backend.begin(is_async)

    async def commit(self, conn: Any, run_id: str, call_id: str, key: str, output: str, is_error: bool) -> bool:
        """Add the call's completion record and commit; False (all rolled back) when the call
        had committed already, by another process."""
        return await self._backend.commit(conn, run_id, call_id, key, output, is_error)

    async def rollback(self, conn: Any, *, reuse: bool = True) -> None:
        """Roll back; `reuse=False` when user code may still hold the connection (a sync tool's
        thread that outlived its timeout): it is closed, never used again."""
        await self._backend.rollback(conn, reuse)

    def lost(self, conn: Any) -> bool:
        """Whether `conn` is dead (the server ended it, the network dropped it): what failed
        on it failed for that, and nothing on it was committed by eudaimon."""
        return self._backend.lost(conn)

    async def lookup(self, run_id: str, call_id: str) -> StoredCompletion | None:
        """The call's completion record, if its transaction committed."""
        return await self._backend.lookup(run_id, call_id)

    async def close(self) -> None:
        """Close the connections kept for later calls."""
        await self._backend.close()


def mask(url: str) -> str:
    """`url` with its password replaced by `**********`."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<a datasource URL that does not parse>"
    if not password:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:**********@{host}"))


def _plain_postgres(url: str) -> str:
    """An SQLAlchemy-style `postgresql+psycopg://` as the libpq URL psycopg reads."""
    scheme, rest = url.split(":", 1)
    return "postgresql:" + rest if scheme.lower() != "postgres" else url
