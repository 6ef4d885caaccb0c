"""Creating the store's schema, or upgrading it, once per store before its first pool opens;
for a read-only store, checking that it is there and current instead.

It runs on a connection of its own, in one transaction holding a PostgreSQL advisory lock: two
processes starting at once do not race their `CREATE … IF NOT EXISTS` into a catalog conflict.
A read-only store never creates or upgrades anything: reading must not turn a typo'd database
or schema into a new, empty journal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import psycopg

from eudaimon.core.errors import JournalError
from eudaimon.stores.postgres import _index
from eudaimon.stores.postgres._dsn import Target
from eudaimon.stores.postgres._pools import Connection
from eudaimon.stores.postgres._sql import LOCK_CLASS, SCHEMA_VERSION, Statements


async def create(
    conn: Connection, sql: Statements, target: Target, backfill: Callable[[Connection], Awaitable[None]]
) -> None:
    """Create the schema's tables if missing and upgrade an older schema in place (a version 2
    one gains the run index, which `backfill` fills from the journal in the same transaction).

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
                await _index.create_search(conn, sql.quoted)
            version = await _version(conn, sql)
            if version == 1:  # texts and messages inline: add their tables, the rows read as they are
                for statement in sql.upgrade_from_1:
                    await conn.execute(statement)
                version = await _version(conn, sql)
            if version == 2:  # no run index: add it, filled from every run's journal
                for statement in sql.upgrade_from_2:
                    await conn.execute(statement)
                await backfill(conn)
                await _index.create_search(conn, sql.quoted)
                version = await _version(conn, sql)
            if version == 3:  # no due index, no records table (schedules, the webhook outbox): add them
                for statement in sql.upgrade_from_3:
                    await conn.execute(statement)
                version = await _version(conn, sql)
            if version == 4:  # the index's filters read from bodies in SQL: add them as columns
                for statement in sql.upgrade_from_4:
                    await conn.execute(statement)
                await _index.fill_filters(conn, sql.quoted)
                version = await _version(conn, sql)
    except psycopg.Error as exc:
        raise target.failed(sql.schema, exc) from exc
    _check_version(version, sql, target)


async def check(conn: Connection, sql: Statements, target: Target) -> None:
    """Check, without writing, that the schema holds a journal this eudaimon reads.

    Raises:
        JournalError: the schema has no journal (nothing was written to it yet, or the database
            or schema is not the intended one), it needs an upgrade only a writer can make, or
            the database failed.
    """
    try:
        exists = await (await conn.execute("SELECT to_regclass(%s)", (sql.meta_table,))).fetchone()
        if exists is None or exists[0] is None:
            raise JournalError(
                f"the PostgreSQL journal at {target} (schema {sql.schema}) is empty: it has not been "
                "initialised, and reading never creates it. Check the URL's database and the schema; "
                "a journal is created by the first run written to it (a store opened without read_only)"
            )
        version = await _version(conn, sql)
    except psycopg.Error as exc:
        raise target.failed(sql.schema, exc) from exc
    if version in (1, 2, 3, 4):
        raise JournalError(
            f"the PostgreSQL journal at {target} (schema {sql.schema}) has schema version {version}, which is "
            f"upgraded to {SCHEMA_VERSION} in place by the first store that opens it for writing; "
            "open it once without read_only"
        )
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
