"""The run index in PostgreSQL (`eudaimon.core.run_index`): one row per run, written by the
append's own statement (a CTE beside the claim), read by listings, search, recovery and the
dashboard.

- The row is computed before the statement, from the row this store wrote last for the run
  (`stores.index.LastRows`), else read back (`SELECT body`), else folded from the journal (a
  run this process never wrote, in a store opened after an upgrade that could not read it).
  The CTE's UPDATE is guarded by `next_seq = expected`; the statement says whether it wrote
  (`indexed`), and a miss is repaired at once from the journal.
- Run ids order as bytes (`COLLATE "C"`), as in the other stores, so a cursor means the same
  place in every store.
- `q` is a substring of the lower-cased `search` column, asked as `LIKE '%q%'` (escaped), which
  a trigram GIN index (`pg_trgm`) answers when the extension can be created; without it the
  same query scans the index rows.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg

from eudaimon.core.run_index import RunRow
from eudaimon.stores.index import DayRow, RunQuery, day_row, parsed_row

logger = logging.getLogger("eudaimon.stores")

DUE_DDL = (
    "ALTER TABLE {s}.run_index ADD COLUMN IF NOT EXISTS due_at timestamptz",
    "CREATE INDEX IF NOT EXISTS run_index_by_due ON {s}.run_index (due_at) WHERE due_at IS NOT NULL",
)
"""Schema 4, the due index (`RunRow.due_at`): the sweepers that fire approval deadlines and wake
waiting calls read the runs due by now off it, never every waiting run. A schema 3 gains it in
place (`_sql._UPGRADE_FROM_3`); older rows stay NULL (their journals hold no deadline or wait)."""

FILTER_DDL = (
    "ALTER TABLE {s}.run_index ADD COLUMN IF NOT EXISTS replay_of text",
    "ALTER TABLE {s}.run_index ADD COLUMN IF NOT EXISTS version text NOT NULL DEFAULT ''",
    "ALTER TABLE {s}.run_index ADD COLUMN IF NOT EXISTS cost_known boolean NOT NULL DEFAULT false",
)
"""Schema 5, the filters of listings and the dashboard as columns (`RunRow.replay_of`, `version`,
`cost_known`), never read out of `body` in SQL: a body is the codec's JSON, which may hold
`\\u0000` (a NUL in a prompt or a tool's output), and PostgreSQL refuses to turn that into
text, so one such run made every listing that parsed bodies fail. A schema 4 gains them in
place (`_sql._UPGRADE_FROM_4`), filled from each row's body by `fill_filters`."""

DDL = (
    """CREATE TABLE IF NOT EXISTS {s}.run_index (
        run_id      text COLLATE "C" PRIMARY KEY,
        agent       text        NOT NULL,
        thread_id   text,
        status      text        NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        ended_at    timestamptz,
        next_seq    bigint      NOT NULL,
        duration_ms bigint,
        cost_usd    float8      NOT NULL,
        input_tokens  bigint    NOT NULL,
        output_tokens bigint    NOT NULL,
        search      text        NOT NULL,
        body        text        NOT NULL,
        due_at      timestamptz
    )""",
    "CREATE INDEX IF NOT EXISTS run_index_by_update ON {s}.run_index (updated_at DESC, run_id DESC)",
    "CREATE INDEX IF NOT EXISTS run_index_by_status ON {s}.run_index (status, updated_at DESC, run_id DESC)",
    "CREATE INDEX IF NOT EXISTS run_index_by_agent ON {s}.run_index (agent, updated_at DESC, run_id DESC)",
    "CREATE INDEX IF NOT EXISTS run_index_by_thread ON {s}.run_index (thread_id, updated_at DESC, run_id DESC)",
    # The dashboard's and `since`/`until`'s: covering (an index-only scan of the window).
    "CREATE INDEX IF NOT EXISTS run_index_by_creation ON {s}.run_index (created_at)"
    " INCLUDE (agent, status, duration_ms, cost_usd, input_tokens, output_tokens)",
    *DUE_DDL,
    *FILTER_DDL,
)

_VALUES = (
    "%(ix_agent)s, %(ix_thread)s, %(ix_status)s, %(ix_created)s::timestamptz, %(ix_updated)s::timestamptz,"
    " %(ix_ended)s::timestamptz, %(ix_next)s::bigint, %(ix_duration)s::bigint, %(ix_cost)s::float8,"
    " %(ix_in)s::bigint, %(ix_out)s::bigint, %(ix_search)s, %(ix_body)s, %(ix_due)s::timestamptz,"
    " %(ix_replay_of)s, %(ix_version)s, %(ix_cost_known)s"
)
_COLUMNS = (
    "agent, thread_id, status, created_at, updated_at, ended_at, next_seq, duration_ms, cost_usd,"
    " input_tokens, output_tokens, search, body, due_at, replay_of, version, cost_known"
)
_SET_ALL = ", ".join(f"{c} = EXCLUDED.{c}" for c in _COLUMNS.split(", "))

CREATE = (
    ", indexed AS (INSERT INTO {s}.run_index (run_id, " + _COLUMNS + ") SELECT claimed.run_id, " + _VALUES
    + " FROM claimed ON CONFLICT (run_id) DO UPDATE SET " + _SET_ALL + " RETURNING 1)"
)  # fmt: skip
"""The CTE a run's first append adds (a row left without events, by a hand edit, is replaced)."""

EXTEND = """, indexed AS (UPDATE {s}.run_index AS ix SET status = %(ix_status)s, updated_at = %(ix_updated)s::timestamptz,
    ended_at = %(ix_ended)s::timestamptz, next_seq = %(ix_next)s::bigint, duration_ms = %(ix_duration)s::bigint,
    cost_usd = %(ix_cost)s::float8, input_tokens = %(ix_in)s::bigint, output_tokens = %(ix_out)s::bigint,
    search = %(ix_search)s, body = %(ix_body)s, due_at = %(ix_due)s::timestamptz,
    version = %(ix_version)s, cost_known = %(ix_cost_known)s
    FROM claimed WHERE ix.run_id = claimed.run_id AND ix.next_seq = %(expected)s RETURNING 1)"""

UPSERT = "INSERT INTO {s}.run_index (run_id, " + _COLUMNS + ") VALUES (%(run)s, " + _VALUES + ")"
UPSERT += " ON CONFLICT (run_id) DO UPDATE SET " + _SET_ALL


async def create_search(conn: Any, s: str) -> bool:
    """A trigram index on `search`, if `pg_trgm` is there or may be created (it is a trusted
    extension: a database owner may); without it `q` scans. Whether the index was made."""
    try:
        async with conn.transaction():  # a savepoint: a refusal leaves the schema's transaction going
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            found = await (
                await conn.execute(
                    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                    " WHERE e.extname = 'pg_trgm'"
                )
            ).fetchone()
            opclass = f'"{found[0]}".gin_trgm_ops'
            await conn.execute(
                f"CREATE INDEX IF NOT EXISTS run_index_by_text ON {s}.run_index USING gin (search {opclass})"
            )
        return True
    except psycopg.Error as exc:
        logger.warning("no trigram index for run search (%s): searching scans the run index", exc)
        return False


async def fill_filters(conn: Any, s: str) -> None:
    """Fill a schema 4 index's new filter columns from each row's body, parsed here rather than
    in SQL (where a `\\u0000` in any body fails the statement). A body that does not parse keeps
    the defaults (listed, not a replay, version "") until its run's next append rewrites it."""
    found = await (await conn.execute(f"SELECT run_id, body FROM {s}.run_index")).fetchall()
    filled: list[tuple[str | None, str, bool, str]] = []
    for run_id, body in found:
        row = parsed_row(body)
        if row is None:
            logger.warning("run %s: its index row does not parse; its filters stay unset", run_id)
            continue
        filled.append((row.replay_of, row.version, row.cost_known, run_id))
    async with conn.cursor() as cursor:
        await cursor.executemany(
            f"UPDATE {s}.run_index SET replay_of = %s, version = %s, cost_known = %s WHERE run_id = %s", filled
        )


def params(row: RunRow) -> dict[str, Any]:
    return {
        "ix_agent": row.agent,
        "ix_thread": row.thread_id,
        "ix_status": row.status,
        "ix_created": _aware(row.created_at),
        "ix_updated": _aware(row.updated_at),
        "ix_ended": None if row.ended_at is None else _aware(row.ended_at),
        "ix_next": row.event_count,
        "ix_duration": row.duration_ms,
        "ix_cost": row.cost_usd,
        "ix_in": row.input_tokens,
        "ix_out": row.output_tokens,
        "ix_search": row.search_text,
        "ix_body": row.to_json(),
        "ix_due": None if row.due_at is None else _aware(row.due_at),
        "ix_replay_of": row.replay_of,
        "ix_version": row.version.replace("\x00", ""),  # a text column: PostgreSQL holds no NUL
        "ix_cost_known": row.cost_known,
    }


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def query(s: str, q: RunQuery) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    for column, value in (("status", q.status), ("agent", q.agent), ("thread_id", q.thread_id)):
        if value is not None:
            clauses.append(f"{column} = %s")
            args.append(value)
    if q.statuses:
        clauses.append("status = ANY(%s::text[])")
        args.append(list(q.statuses))
    # Replays and versions: columns of their own, not indexed (a filter beside an indexed one).
    if q.hides_replays:
        clauses.append("replay_of IS NULL")
    if q.replay_of is not None:
        clauses.append("replay_of = %s")
        args.append(q.replay_of)
    if q.version is not None:
        clauses.append("version = %s")
        args.append(q.version.replace("\x00", ""))  # as the column holds it
    if q.q:
        clauses.append("search LIKE %s")
        escaped = q.needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        args.append(f"%{escaped}%")
    if q.since is not None:
        clauses.append("created_at >= %s")
        args.append(q.since)
    if q.until is not None:
        clauses.append("created_at < %s")
        args.append(q.until)
    if q.due_by is not None:
        clauses.append("due_at <= %s")
        args.append(_aware(q.due_by))
    if q.cursor is not None:
        clauses.append("(updated_at, run_id) < (%s::timestamptz, %s)")
        args.extend((q.cursor.updated_at, q.cursor.run_id))
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    sql = f"SELECT body FROM {s}.run_index{where} ORDER BY updated_at DESC, run_id DESC LIMIT %s"
    return sql, [*args, q.limit]


_DAY = "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"

DAYS = f"""SELECT agent, {_DAY} AS day, status, COUNT(*),
    SUM(CASE WHEN cost_known THEN cost_usd END), SUM(input_tokens), SUM(output_tokens)
FROM {{s}}.run_index WHERE created_at >= %(since)s AND (%(agent)s::text IS NULL OR agent = %(agent)s)
    AND replay_of IS NULL
GROUP BY agent, day, status"""

PERCENTILES = f"""SELECT agent, {_DAY} AS day,
    percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms), percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms)
FROM {{s}}.run_index WHERE created_at >= %(since)s AND (%(agent)s::text IS NULL OR agent = %(agent)s)
    AND duration_ms IS NOT NULL AND replay_of IS NULL
GROUP BY agent, day"""


def day_rows(groups: Sequence[tuple[Any, ...]], percentiles: Sequence[tuple[Any, ...]]) -> list[DayRow]:
    ranks = {(str(a), str(d)): (_int(p50), _int(p95)) for a, d, p50, p95 in percentiles}
    days: dict[tuple[str, str], list[tuple[str, int, float | None, int, int]]] = {}
    for agent, day, status, count, cost, tokens_in, tokens_out in groups:
        days.setdefault((str(agent), str(day)), []).append(
            (str(status), int(count), None if cost is None else float(cost), int(tokens_in or 0), int(tokens_out or 0))
        )
    return [
        day_row(agent, day, found, *ranks.get((agent, day), (None, None)))
        for (agent, day), found in sorted(days.items(), key=lambda item: (item[0][1], item[0][0]))
    ]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
