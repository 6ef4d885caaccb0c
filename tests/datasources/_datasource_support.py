"""Datasources for the tests: a SQLite file, and a fresh PostgreSQL schema-less database table
(skipped when `EUDAIMON_TEST_PG_DSN` is unset)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eudaimon.datasources import Datasource

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN")
needs_pg = pytest.mark.skipif(PG_DSN is None, reason="EUDAIMON_TEST_PG_DSN is unset")


def sqlite_source(tmp_path: Path) -> Datasource:
    return Datasource(f"sqlite:///{tmp_path / 'shop.db'}")


def orders_table() -> str:
    """A fresh table name, so PostgreSQL tests never see each other's rows."""
    return f"orders_{uuid.uuid4().hex[:12]}"


async def datasource(kind: str, tmp_path: Path) -> AsyncIterator[Datasource]:
    if kind == "sqlite":
        source = sqlite_source(tmp_path)
    else:
        if PG_DSN is None:
            pytest.skip("EUDAIMON_TEST_PG_DSN is unset")
        source = Datasource(PG_DSN)
    yield source
    await source.close()
