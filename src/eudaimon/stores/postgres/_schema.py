"""Creating the store's schema, or upgrading it, once per store before its first pool opens.

It runs on a connection of its own, in one transaction holding a PostgreSQL advisory lock: two
processes starting at once do not race their `CREATE … IF NOT EXISTS` into a catalog conflict.
"""

from __future__ import annotations

import psycopg

from eudaimon.core.errors import JournalError
from eudaimon.stores.postgres._dsn import Target
from eudaimon.stores.postgres._pools import Connection
from eudaimon.stores.postgres._sql import LOCK_CLASS, SCHEMA_VERSION, Statements


async def create(conn: Connection, sql: Statements, target: Target) -> None:
    """Create the schema's tables if missing and upgrade a version 1 schema in place.

    Raises:
        JournalError: the database failed, or the schema is of a version this eudaimon cannot read.
    """
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS, sql.schema))
            exists = await (await conn.execute("SELECT to_regclass(%s)", (sql.meta_table,))).fetchone()
            if exists is None or exists[0] is None:
                for statement in sql.ddl:
                    await conn.execute(statement)
            version = await _version(conn, sql)
            if version == 1:  # texts and messages inline: add their tables, the rows read as they are
                for statement in sql.upgrade_from_1:
                    await conn.execute(statement)
                version = await _version(conn, sql)
    except psycopg.Error as exc:
        raise target.failed(sql.schema, exc) from exc
    _check_version(version, sql, target)


def _check_version(version: int, sql: Statements, target: Target) -> None:
    if version != SCHEMA_VERSION:
        raise JournalError(
            f"the PostgreSQL journal at {target} (schema {sql.schema}) has schema version {version}; "
            f"this eudaimon reads version {SCHEMA_VERSION} — upgrade eudaimon, or use another schema"
        )


async def _version(conn: Connection, sql: Statements) -> int:
    row = await (await conn.execute(sql.schema_version)).fetchone()
    return int(row[0]) if row else 0
