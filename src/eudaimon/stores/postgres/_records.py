"""The `records` table (`stores.records`): schedules and the webhook outbox, added in version 4."""

from __future__ import annotations

from dataclasses import dataclass

DDL = (
    """CREATE TABLE IF NOT EXISTS {s}.records (
        kind text NOT NULL,
        key  text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (kind, key)
    )""",
)


@dataclass(frozen=True, slots=True)
class RecordStatements:
    put: str
    put_new: str
    put_over: str
    load_all: str
    load_one: str
    delete: str

    @classmethod
    def for_schema(cls, s: str) -> RecordStatements:
        """`s` is the schema's name already quoted."""
        insert = f"INSERT INTO {s}.records (kind, key, body) VALUES (%s, %s, %s) ON CONFLICT (kind, key)"
        return cls(
            put=f"{insert} DO UPDATE SET body = EXCLUDED.body",
            put_new=f"{insert} DO NOTHING",
            put_over=f"UPDATE {s}.records SET body = %s WHERE kind = %s AND key = %s AND body = %s",
            load_all=f"SELECT key, body FROM {s}.records WHERE kind = %s ORDER BY key LIMIT %s",
            load_one=f"SELECT body FROM {s}.records WHERE kind = %s AND key = %s",
            delete=f"DELETE FROM {s}.records WHERE kind = %s AND key = %s",
        )
