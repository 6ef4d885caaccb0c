"""A PostgreSQL database of a test's own on `EUDAIMON_TEST_PG_DSN`, dropped when it is done.

A database, not a schema, when what runs on it uses the default schema (`eudaimon`) or is a
server of its own: nothing is left from an earlier run or an older version, and a test that
creates a database drops it (`WITH (FORCE)`: a killed process may still hold connections).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@contextlib.contextmanager
def postgres_database(prefix: str = "eudaimon_test", dsn: str = PG_DSN) -> Iterator[str]:
    """A new database named `PREFIX_<random>` on the server of `dsn`: its URL, dropped on exit."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(dsn)._replace(path="/" + name))
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
