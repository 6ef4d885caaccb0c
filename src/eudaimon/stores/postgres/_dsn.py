"""What of a DSN may be shown — host, port, database — and how to keep its password out of text.

A DSN often carries a password, and reprs, logs and error messages end up in terminals, issue
trackers and log stores. So the store keeps the DSN to itself and shows only a `Target`;
messages that quote the driver are scrubbed of the password first.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from eudaimon.core.errors import ConfigurationError, JournalError
from eudaimon.core.redact import redact


@dataclass(frozen=True, slots=True)
class Target:
    """The server and database a DSN names, safe to print."""

    host: str
    port: str
    dbname: str
    sets_connect_timeout: bool
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.dbname}"

    def scrub(self, text: str) -> str:
        """`text` with every form of the password, and any other credential, replaced by `***`."""
        return redact(text, self.secrets)

    def unreachable(self, exc: BaseException) -> JournalError:
        """The error for a connection that could not be made (raise it `from None`: the
        driver's exception is not shown, only its scrubbed reason)."""
        reason = " ".join(self.scrub(str(exc)).split()) or type(exc).__name__  # libpq's are multi-line
        return JournalError(
            f"cannot connect to the PostgreSQL journal at {self}: {reason} — check that the server is "
            "running and that the DSN's host, port, user and database are right"
        )

    def failed(self, schema: str, exc: psycopg.Error) -> JournalError:
        """The error for a statement that failed on an open connection."""
        state = f" [SQLSTATE {exc.sqlstate}]" if exc.sqlstate else ""
        return JournalError(f"the PostgreSQL journal at {self} (schema {schema}) failed{state}: {self.scrub(str(exc))}")


def parse_dsn(dsn: str) -> Target:
    """The `Target` of a libpq DSN: a `postgresql://` or `postgres://` URL, or `key=value` pairs.

    Raises:
        ConfigurationError: the DSN does not parse. The message does not quote it, since the
            part that failed to parse may be the password.
    """
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        raise ConfigurationError(
            "the PostgreSQL DSN does not parse (it is not shown: it may hold a password); "
            "write postgresql://user:password@host:5432/dbname or 'host=… port=… dbname=… user=…'"
        ) from None
    secrets = [str(params.get("password") or "")]
    if "://" in dsn:
        with contextlib.suppress(ValueError):
            secrets.append(urlsplit(dsn).password or "")  # as written, maybe percent-encoded
    user = str(params.get("user") or "")
    return Target(
        host=str(params.get("host") or params.get("hostaddr") or "localhost"),
        port=str(params.get("port") or "5432"),
        dbname=str(params.get("dbname") or user or "(default)"),
        sets_connect_timeout="connect_timeout" in params,
        secrets=tuple(sorted({s for s in secrets if s}, key=len, reverse=True)),
    )
