"""The change tests' PostgreSQL schemas are theirs alone, and dropped when the session ends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from _change_agents import PG_DSN, SCHEMAS


@pytest.fixture(scope="session", autouse=True)
def _drop_schemas() -> Iterator[None]:
    yield
    if not SCHEMAS:
        return
    import psycopg

    with contextlib.suppress(psycopg.OperationalError), psycopg.connect(PG_DSN, autocommit=True) as conn:
        for schema in SCHEMAS:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
