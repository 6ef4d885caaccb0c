"""The PostgreSQL journal's tables and the statements the store sends, for one schema.

Why the statements look like this:

- Every write is ONE statement, run in autocommit: one statement is one transaction, so it is
  atomic, costs one round trip and one commit, and leaves no transaction open if the client
  dies mid-way. Several tables change together through data-modifying CTEs.
- An append claims the run first (`UPDATE runs … WHERE next_seq = expected`, or for a new run
  `INSERT … ON CONFLICT DO NOTHING`) and inserts its events only if the claim returned a row. Two
  writers at one seq serialize on the `runs` row: the second re-checks `next_seq` after the
  first commits, finds it moved, and writes nothing. The PRIMARY KEY (run_id, seq) of `events`
  is the hard fence behind that claim.
- `payload` is text, not jsonb: jsonb refuses the `\\u0000` escape a tool's output may contain
  and rewrites numbers and key order; the codec owns the JSON and gets back what it wrote.
  (`payload::jsonb` still works for ad-hoc queries.)
- `at` is a timestamptz, which keeps the instant but not the writer's UTC offset, so the
  offset is kept beside it (`at_offset`, NULL for a naive time) and events load back equal.
- Leases compare `expires_at` with the server's `now()`: machines whose clocks disagree still
  agree on who holds a lease.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eudaimon.core.errors import ConfigurationError

SCHEMA_VERSION = 1
LOCK_CLASS = 0x6575_6461  # "euda": the advisory-lock namespace of schema creation

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_DDL = (
    "CREATE SCHEMA IF NOT EXISTS {s}",
    "CREATE TABLE IF NOT EXISTS {s}.meta (name text PRIMARY KEY, value bigint NOT NULL)",
    """CREATE TABLE IF NOT EXISTS {s}.events (
        run_id    text        NOT NULL,
        seq       bigint      NOT NULL,
        at        timestamptz NOT NULL,
        at_offset interval,
        type      text        NOT NULL,
        payload   text        NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS {s}.runs (
        run_id     text        PRIMARY KEY,
        run_no     bigint      GENERATED ALWAYS AS IDENTITY,
        agent      text        NOT NULL,
        thread_id  text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        next_seq   bigint      NOT NULL,
        last_type  text        NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS runs_by_updated_at ON {s}.runs (updated_at DESC, run_no)",
    "CREATE INDEX IF NOT EXISTS runs_by_thread ON {s}.runs (thread_id, updated_at DESC, run_no)",
    """CREATE TABLE IF NOT EXISTS {s}.leases (
        name       text        PRIMARY KEY,
        owner      text        NOT NULL,
        expires_at timestamptz NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS {s}.snapshots (
        key     text   PRIMARY KEY,
        version bigint NOT NULL,
        data    text   NOT NULL
    )""",
    f"INSERT INTO {{s}}.meta (name, value) VALUES ('schema_version', {SCHEMA_VERSION}) ON CONFLICT DO NOTHING",
)

_INSERT_EVENTS = """INSERT INTO {s}.events (run_id, seq, at, at_offset, type, payload)
    SELECT claimed.run_id, e.seq, e.at, e.at_offset, e.type, e.payload
    FROM claimed, unnest(%(seqs)s::bigint[], %(ats)s::timestamptz[], %(offsets)s::interval[],
                         %(types)s::text[], %(payloads)s::text[]) AS e(seq, at, at_offset, type, payload)"""


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the store, with the schema name already quoted in."""

    schema: str
    ddl: tuple[str, ...]
    meta_table: str
    schema_version: str
    create_run: str
    extend_run: str
    next_seq: str
    top_seq: str
    load: str
    list_runs: str
    list_thread_runs: str
    delete_run: str
    take_lease: str
    lease_holder: str
    release_lease: str
    save_snapshot: str
    load_snapshot: str
    delete_snapshots: str

    @classmethod
    def for_schema(cls, schema: str) -> Statements:
        """Statements for `schema`, which must be a plain identifier (it is spliced into SQL).

        Raises:
            ConfigurationError: `schema` is not a letter or `_` followed by up to 62 letters,
                digits or `_`.
        """
        if not _IDENTIFIER.fullmatch(schema):
            raise ConfigurationError(
                f"PostgreSQL schema {schema!r} is not a plain identifier; use letters, digits and _ (at most 63)"
            )
        s = '"' + schema + '"'
        summary = "SELECT run_id, agent, thread_id, created_at, updated_at, next_seq, last_type FROM {s}.runs"
        return cls(
            schema=schema,
            ddl=tuple(statement.format(s=s) for statement in _DDL),
            meta_table=f"{s}.meta",
            schema_version=f"SELECT value FROM {s}.meta WHERE name = 'schema_version'",
            create_run=(
                "WITH claimed AS (INSERT INTO {s}.runs"
                " (run_id, agent, thread_id, created_at, updated_at, next_seq, last_type)"
                " VALUES (%(run)s, %(agent)s, %(thread)s, %(created)s, %(updated)s, %(next)s, %(last)s)"
                " ON CONFLICT (run_id) DO NOTHING RETURNING run_id) " + _INSERT_EVENTS
            ).format(s=s),
            extend_run=(
                "WITH claimed AS (UPDATE {s}.runs SET updated_at = %(updated)s, next_seq = %(next)s,"
                " last_type = %(last)s WHERE run_id = %(run)s AND next_seq = %(expected)s RETURNING run_id) "
                + _INSERT_EVENTS
            ).format(s=s),
            next_seq=f"SELECT next_seq FROM {s}.runs WHERE run_id = %s",
            top_seq=f"SELECT COALESCE(MAX(seq) + 1, 0) FROM {s}.events WHERE run_id = %s",
            load=(
                f"SELECT seq, at, at_offset, type, payload FROM {s}.events WHERE run_id = %s AND seq > %s ORDER BY seq"
            ),
            list_runs=(summary + " ORDER BY updated_at DESC, run_no LIMIT %s").format(s=s),
            list_thread_runs=(summary + " WHERE thread_id = %s ORDER BY updated_at DESC, run_no LIMIT %s").format(s=s),
            delete_run=(
                f"WITH e AS (DELETE FROM {s}.events WHERE run_id = %(run)s RETURNING 1),"
                f" n AS (DELETE FROM {s}.snapshots WHERE key = %(key)s RETURNING 1),"
                f" r AS (DELETE FROM {s}.runs WHERE run_id = %(run)s RETURNING 1)"
                " SELECT (SELECT count(*) FROM e) + (SELECT count(*) FROM n) + (SELECT count(*) FROM r)"
            ),
            take_lease=(
                f"INSERT INTO {s}.leases AS held (name, owner, expires_at)"
                " VALUES (%s, %s, now() + %s * interval '1 second')"
                " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at"
                " WHERE held.owner = EXCLUDED.owner OR held.expires_at <= now()"
            ),
            lease_holder=(
                f"SELECT owner, EXTRACT(EPOCH FROM expires_at - now())::float8 FROM {s}.leases WHERE name = %s"
            ),
            release_lease=f"DELETE FROM {s}.leases WHERE name = %s AND owner = %s",
            save_snapshot=(
                f"INSERT INTO {s}.snapshots AS kept (key, version, data) VALUES (%s, %s, %s)"
                " ON CONFLICT (key) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data"
                " WHERE kept.version <= EXCLUDED.version"
            ),
            load_snapshot=f"SELECT version, data FROM {s}.snapshots WHERE key = %s",
            delete_snapshots=f"DELETE FROM {s}.snapshots",
        )
