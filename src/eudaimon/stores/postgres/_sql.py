"""The PostgreSQL journal's tables and the statements the store sends, for one schema.

Why the statements look like this:

- An append whose events carry no long text and no history (most steps) is ONE statement in
  autocommit: one statement is one transaction, so it is atomic, costs one round trip and one
  commit, and leaves no transaction open if the client dies mid-way. Several tables change
  together through data-modifying CTEs.
- An append claims the run first (`UPDATE runs … WHERE next_seq = expected`, or for a new run
  `INSERT … ON CONFLICT DO NOTHING`) and inserts its events only if the claim returned a row. Two
  writers at one seq serialize on the `runs` row: the second re-checks `next_seq` after the
  first commits, finds it moved, and writes nothing. The PRIMARY KEY (run_id, seq) of `events`
  is the hard fence behind that claim.
- Long texts and history messages are stored once, by digest (`eudaimon.stores.packing`): `texts`
  count their references, `messages` are numbered in the order first stored, `message_refs`
  records the ranges of numbers each run names. An append that stores any takes a transaction
  of a few statements, because its rows name message numbers it must first learn (inserting
  the messages not stored yet). The claim still comes last, with the text counts and the
  message ranges in the same statement as the events: a refused claim writes none of them, and
  the transaction rolls back the messages inserted before it.
- That content is shared by runs, and `delete_run` frees what no other run reaches: between its
  finding message 17 reached by no run and deleting it, an append could find message 17 stored
  and name it, committing a run that points at a deleted message. No row lock covers this (the
  append only reads the message; the reach is computed from `message_refs` rows not committed
  yet). So an append with content holds a SHARED advisory lock of the schema's content for its
  transaction, and `delete_run` holds it EXCLUSIVELY: appends still run side by side, a delete
  waits for them and they for it. Appends without content name nothing shared and skip it.
- Texts are counted in digest order, so two appends lock their rows in the same order and do
  not deadlock. A new message takes a number only if no stored one has its digest (`NOT
  EXISTS` before `ON CONFLICT`): an identity number is spent even on a conflicting row.
- `payload` and the bodies are text, not jsonb: jsonb refuses the `\\u0000` escape a tool's
  output may contain and rewrites numbers and key order; the codec owns the JSON and gets back
  what it wrote. (`payload::jsonb` still works for ad-hoc queries.) PostgreSQL keeps a long
  body out of line (TOAST), so texts need no splitting into parts.
- `at` is a timestamptz, which keeps the instant but not the writer's UTC offset, so the
  offset is kept beside it (`at_offset`, NULL for a naive time) and events load back equal.
- Leases compare `expires_at` with the server's `now()`: machines whose clocks disagree still
  agree on who holds a lease.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eudaimon.core.errors import ConfigurationError
from eudaimon.stores.postgres import _index, _records
from eudaimon.stores.postgres._records import RecordStatements

SCHEMA_VERSION = 5
"""1: events inline. 2: long texts and history messages stored once. 3: the run index (`_index`).
4: the run index's due index (`_index.DUE_DDL`) and the records table (`_records`: schedules, the
webhook outbox). 5: the run index's filters as columns (`_index.FILTER_DDL`), never parsed out of
a body in SQL.
Older schemas are upgraded in place, the index filled from the journal, once."""
LOCK_CLASS = 0x6575_6461  # "euda": the advisory-lock namespace of schema creation and of content

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_CONTENT_DDL = (
    """CREATE TABLE IF NOT EXISTS {s}.texts (
        digest bytea  PRIMARY KEY,
        refs   bigint NOT NULL DEFAULT 0,
        body   text   NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS {s}.messages (
        key    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        digest bytea  NOT NULL UNIQUE,
        body   text   NOT NULL,
        text   bytea
    )""",
    """CREATE TABLE IF NOT EXISTS {s}.message_refs (
        run_id text   NOT NULL,
        lo     bigint NOT NULL,
        hi     bigint NOT NULL,
        PRIMARY KEY (run_id, lo)
    )""",
    "CREATE INDEX IF NOT EXISTS message_refs_by_lo ON {s}.message_refs (lo, hi)",
)

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
    *_CONTENT_DDL,
    *_index.DDL,
    *_records.DDL,
    f"INSERT INTO {{s}}.meta (name, value) VALUES ('schema_version', {SCHEMA_VERSION}) ON CONFLICT DO NOTHING",
)

_UPGRADE_FROM_1 = (
    *_CONTENT_DDL,
    "UPDATE {s}.meta SET value = 2 WHERE name = 'schema_version' AND value = 1",
)

_UPGRADE_FROM_2 = (
    *_index.DDL,
    "UPDATE {s}.meta SET value = 3 WHERE name = 'schema_version' AND value = 2",
)

_UPGRADE_FROM_3 = (
    *_index.DUE_DDL,
    *_records.DDL,
    "UPDATE {s}.meta SET value = 4 WHERE name = 'schema_version' AND value = 3",
)

_UPGRADE_FROM_4 = (
    *_index.FILTER_DDL,
    "UPDATE {s}.meta SET value = 5 WHERE name = 'schema_version' AND value = 4",
)

_FENCED = """(%(lease)s::text IS NULL OR EXISTS (SELECT 1 FROM {s}.leases
        WHERE name = %(lease)s AND owner = %(owner)s AND expires_at > now() FOR SHARE)
    OR EXISTS (SELECT 1 FROM retaken))"""
"""An append's fence (`stores.base.Fence`): its lease is still its owner's, unexpired, or lapsed
with no one taking it and so taken back (`retaken`, which each inserted event's row returns, so
the store can tell the lease's keeper). FOR SHARE makes a takeover committing meanwhile wait for
this statement, or be seen by it."""

_RETAKE = """retaken AS (UPDATE {s}.leases SET expires_at = now() + %(lease_ttl)s * interval '1 second'
    WHERE name = %(lease)s AND owner = %(owner)s AND expires_at <= now() AND %(lease_ttl)s > 0 RETURNING 1), """

_CREATE_RUN = (
    """claimed AS (INSERT INTO {s}.runs
        (run_id, agent, thread_id, created_at, updated_at, next_seq, last_type)
    SELECT %(run)s, %(agent)s, %(thread)s, %(created)s::timestamptz, %(updated)s::timestamptz, %(next)s::bigint,
        %(last)s WHERE """
    + _FENCED
    + """
    ON CONFLICT (run_id) DO NOTHING RETURNING run_id)"""
)

_EXTEND_RUN = (
    """claimed AS (UPDATE {s}.runs SET updated_at = %(updated)s, next_seq = %(next)s, last_type = %(last)s
    WHERE run_id = %(run)s AND next_seq = %(expected)s AND """
    + _FENCED
    + " RETURNING run_id)"
)

# What an append with content writes beside its events, from the claim: nothing if it failed.
_COUNT_CONTENT = """, counted AS (INSERT INTO {s}.texts AS kept (digest, refs, body)
    SELECT t.digest, t.refs, t.body
    FROM claimed, unnest(%(text_digests)s::bytea[], %(text_refs)s::bigint[], %(text_bodies)s::text[])
        AS t(digest, refs, body)
    ON CONFLICT (digest) DO UPDATE SET refs = kept.refs + EXCLUDED.refs),
spans AS (INSERT INTO {s}.message_refs (run_id, lo, hi)
    SELECT claimed.run_id, r.lo, r.hi FROM claimed, unnest(%(los)s::bigint[], %(his)s::bigint[]) AS r(lo, hi)
    ON CONFLICT DO NOTHING)"""

_INSERT_EVENTS = """ INSERT INTO {s}.events (run_id, seq, at, at_offset, type, payload)
    SELECT claimed.run_id, e.seq, e.at, e.at_offset, e.type, e.payload
    FROM claimed, unnest(%(seqs)s::bigint[], %(ats)s::timestamptz[], %(offsets)s::interval[],
                         %(types)s::text[], %(payloads)s::text[]) AS e(seq, at, at_offset, type, payload)
    RETURNING EXISTS (SELECT FROM retaken), EXISTS (SELECT FROM indexed)"""

# The new messages in the order given, then the number of every message named (the main query
# does not see the CTE's rows, so those come from its RETURNING). A row another transaction
# stored after this statement began is in neither: the store reads those keys again.
_INSERT_MESSAGES = """WITH wanted AS (
    SELECT * FROM unnest(%(digests)s::bytea[], %(bodies)s::text[], %(texts)s::bytea[]) WITH ORDINALITY
        AS w(digest, body, text, ord)),
added AS (INSERT INTO {s}.messages (digest, body, text)
    SELECT w.digest, w.body, w.text FROM wanted w
    WHERE NOT EXISTS (SELECT FROM {s}.messages m WHERE m.digest = w.digest) ORDER BY w.ord
    ON CONFLICT (digest) DO NOTHING RETURNING digest, key)
SELECT digest, key, true FROM added
UNION ALL SELECT m.digest, m.key, false FROM {s}.messages m WHERE m.digest = ANY(%(digests)s::bytea[])"""

# The run's message ranges, dropped, each with every range of another run that overlaps it.
_DROP_MESSAGE_REFS = """WITH dropped AS (DELETE FROM {s}.message_refs WHERE run_id = %(run)s RETURNING lo, hi)
SELECT d.lo, d.hi, o.lo, o.hi FROM dropped d
LEFT JOIN {s}.message_refs o ON o.lo <= d.hi AND o.hi >= d.lo AND o.run_id <> %(run)s"""


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the store, with the schema name already quoted in."""

    schema: str
    ddl: tuple[str, ...]
    upgrade_from_1: tuple[str, ...]
    upgrade_from_2: tuple[str, ...]
    upgrade_from_3: tuple[str, ...]
    upgrade_from_4: tuple[str, ...]
    records: RecordStatements
    quoted: str
    """The schema's name, quoted, for the statements built per query (`_index.query`)."""
    index_row: str
    upsert_index: str
    runs_unindexed: str
    days: str
    percentiles: str
    meta_table: str
    schema_version: str
    create_run: str
    extend_run: str
    create_run_content: str
    extend_run_content: str
    share_content: str
    lock_content: str
    insert_messages: str
    message_keys: str
    next_seq: str
    top_seq: str
    load: str
    load_messages: str
    load_texts: str
    list_runs: str
    list_thread_runs: str
    text_payloads: str
    drop_message_refs: str
    delete_messages: str
    release_texts: str
    delete_texts: str
    delete_run: str
    take_lease: str
    renew_leases: str
    lease_holder: str
    lease_holders: str
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
        content_key = f"{LOCK_CLASS}, hashtext('{schema}.content')"  # one lock per schema's content
        return cls(
            schema=schema,
            ddl=tuple(statement.format(s=s) for statement in _DDL),
            upgrade_from_1=tuple(statement.format(s=s) for statement in _UPGRADE_FROM_1),
            upgrade_from_2=tuple(statement.format(s=s) for statement in _UPGRADE_FROM_2),
            upgrade_from_3=tuple(statement.format(s=s) for statement in _UPGRADE_FROM_3),
            upgrade_from_4=tuple(statement.format(s=s) for statement in _UPGRADE_FROM_4),
            records=RecordStatements.for_schema(s),
            quoted=s,
            index_row=f"SELECT body FROM {s}.run_index WHERE run_id = %s",
            upsert_index=_index.UPSERT.format(s=s),
            runs_unindexed=(
                f"SELECT r.run_id, r.agent, r.thread_id, r.created_at FROM {s}.runs r"
                f" WHERE NOT EXISTS (SELECT FROM {s}.run_index ix WHERE ix.run_id = r.run_id)"
            ),
            days=_index.DAYS.format(s=s),
            percentiles=_index.PERCENTILES.format(s=s),
            meta_table=f"{s}.meta",
            schema_version=f"SELECT value FROM {s}.meta WHERE name = 'schema_version'",
            create_run=("WITH " + _RETAKE + _CREATE_RUN + _index.CREATE + _INSERT_EVENTS).format(s=s),
            extend_run=("WITH " + _RETAKE + _EXTEND_RUN + _index.EXTEND + _INSERT_EVENTS).format(s=s),
            create_run_content=(
                "WITH " + _RETAKE + _CREATE_RUN + _COUNT_CONTENT + _index.CREATE + _INSERT_EVENTS
            ).format(s=s),
            extend_run_content=(
                "WITH " + _RETAKE + _EXTEND_RUN + _COUNT_CONTENT + _index.EXTEND + _INSERT_EVENTS
            ).format(s=s),
            share_content=f"SELECT pg_advisory_xact_lock_shared({content_key})",
            lock_content=f"SELECT pg_advisory_xact_lock({content_key})",
            insert_messages=_INSERT_MESSAGES.format(s=s),
            message_keys=f"SELECT digest, key FROM {s}.messages WHERE digest = ANY(%s::bytea[])",
            next_seq=f"SELECT next_seq FROM {s}.runs WHERE run_id = %s",
            top_seq=f"SELECT COALESCE(MAX(seq) + 1, 0) FROM {s}.events WHERE run_id = %s",
            load=(
                f"SELECT seq, at, at_offset, type, payload FROM {s}.events WHERE run_id = %s AND seq > %s ORDER BY seq"
            ),
            load_messages=(
                f"SELECT m.key, m.body FROM unnest(%s::bigint[], %s::bigint[]) AS r(lo, hi)"
                f" JOIN {s}.messages m ON m.key BETWEEN r.lo AND r.hi"
            ),
            load_texts=f"SELECT digest, body FROM {s}.texts WHERE digest = ANY(%s::bytea[])",
            list_runs=(summary + " ORDER BY updated_at DESC, run_no LIMIT %s").format(s=s),
            list_thread_runs=(summary + " WHERE thread_id = %s ORDER BY updated_at DESC, run_no LIMIT %s").format(s=s),
            # Every payload that names a text has `"$text"` in it; the store parses only those.
            text_payloads=f"""SELECT payload FROM {s}.events WHERE run_id = %s AND strpos(payload, '"$text"') > 0""",
            drop_message_refs=_DROP_MESSAGE_REFS.format(s=s),
            delete_messages=(
                f"DELETE FROM {s}.messages m USING unnest(%s::bigint[], %s::bigint[]) AS g(lo, hi)"
                " WHERE m.key BETWEEN g.lo AND g.hi RETURNING m.text"
            ),
            release_texts=(
                f"UPDATE {s}.texts t SET refs = t.refs - r.n FROM unnest(%s::bytea[], %s::bigint[]) AS r(digest, n)"
                " WHERE t.digest = r.digest"
            ),
            delete_texts=f"DELETE FROM {s}.texts WHERE digest = ANY(%s::bytea[]) AND refs <= 0",
            delete_run=(
                f"WITH e AS (DELETE FROM {s}.events WHERE run_id = %(run)s RETURNING 1),"
                f" n AS (DELETE FROM {s}.snapshots WHERE key = %(key)s RETURNING 1),"
                f" r AS (DELETE FROM {s}.runs WHERE run_id = %(run)s RETURNING 1),"
                f" ix AS (DELETE FROM {s}.run_index WHERE run_id = %(run)s RETURNING 1)"
                " SELECT (SELECT count(*) FROM e) + (SELECT count(*) FROM n) + (SELECT count(*) FROM r)"
            ),
            take_lease=(
                f"INSERT INTO {s}.leases AS held (name, owner, expires_at)"
                " VALUES (%s, %s, now() + %s * interval '1 second')"
                " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at"
                " WHERE held.owner = EXCLUDED.owner OR held.expires_at <= now()"
            ),
            renew_leases=(
                f"UPDATE {s}.leases AS held SET expires_at = now() + %s * interval '1 second'"
                " FROM unnest(%s::text[], %s::text[]) AS r(name, owner)"
                " WHERE held.name = r.name AND held.owner = r.owner RETURNING held.name, held.owner"
            ),
            lease_holder=(
                f"SELECT owner, EXTRACT(EPOCH FROM expires_at - now())::float8 FROM {s}.leases WHERE name = %s"
            ),
            lease_holders=(
                f"SELECT name, owner, EXTRACT(EPOCH FROM expires_at - now())::float8 FROM {s}.leases"
                " WHERE name = ANY(%s) AND expires_at > now()"
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
