"""What the datasource kill -9 soaks (local and on the Temporal fleet) check of each call: the
promise, call by call, and when it breaks, which call, why, and the run's events.

Counting rows per run is not enough: the soaks' scripted model counts every tool result, error
results too, so a call that ended as an error the model was shown (its row never written) lets
the run go on and complete with a row fewer, and a model shown a conversation without its last
tool result asks for a call twice. Here every call is held to its own row, its own completion
record and a result that is not an error.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from eudaimon.core.codec import event_to_dict
from eudaimon.core.events import Event

Row = tuple[Any, ...]

ORDERS_COLUMNS = "run_id TEXT NOT NULL, n INTEGER NOT NULL, call_key TEXT NOT NULL"
"""The soak and fault agents' orders table: one row per insert call, under the call's key."""


@contextmanager
def orders_database(prefix: str, dsn: str) -> Iterator[tuple[str, str]]:
    """A PostgreSQL database of the test's own holding an empty orders table: (its URL, the table)."""
    import psycopg

    from support.databases import postgres_database

    table = f"orders_{uuid.uuid4().hex[:10]}"
    with postgres_database(prefix, dsn) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {table} ({ORDERS_COLUMNS})")
        yield url, table


def call_problems(
    journals: Mapping[str, Sequence[Event]], rows: Iterable[Row], records: Iterable[Row], *, calls: int, tool: str
) -> list[str]:
    """Every broken promise of the soak, one line each, with the run's events after it.

    `rows` are (run_id, n, call_key) of the tool's table, `records` (run_id, call_id,
    idempotency_key) of eudaimon's completion table. For each run: the model asked for
    `calls` calls, `call_0` … with `n` = 0 …, each once; each call's `tool_completed` is
    not an error; each has exactly one row with its `n` and idempotency key and one
    completion record; no row belongs to no call.
    """
    rows_by_run: dict[str, list[Row]] = {}
    for row in rows:
        rows_by_run.setdefault(str(row[0]), []).append(row)
    records_by_run: dict[str, list[Row]] = {}
    for record in records:
        records_by_run.setdefault(str(record[0]), []).append(record)
    problems: list[str] = []
    for run, events in journals.items():
        found = _run_problems(run, events, rows_by_run.get(run, []), records_by_run.get(run, []), calls, tool)
        if found:
            problems += found
            problems.append(f"  events of {run}:\n" + "\n".join(f"    {line}" for line in describe(events)))
    return problems


def _run_problems(
    run: str, events: Sequence[Event], rows: list[Row], records: list[Row], calls: int, tool: str
) -> list[str]:
    problems: list[str] = []
    if not events or events[-1].type != "run_completed":
        problems.append(f"{run}: did not complete (last event {events[-1].type if events else None})")
    asked = [c for e in events if e.type == "model_called" for c in _tool_calls(e)]
    ids = [c["id"] for c in asked]
    if ids != [f"call_{n}" for n in range(calls)]:
        problems.append(f"{run}: the model asked for {ids}, not call_0 … call_{calls - 1} once each")
    started: dict[str, Any] = {}
    for e in events:
        if e.type == "tool_started":
            started[e.data.call_id] = e.data  # type: ignore[union-attr]
    completed: dict[str, list[Any]] = {}
    for e in events:
        if e.type == "tool_completed" and e.data.tool == tool:  # type: ignore[union-attr]
            completed.setdefault(e.data.call_id, []).append(e.data)  # type: ignore[union-attr]
    per_n = Counter(int(r[1]) for r in rows)
    record_ids = Counter(str(r[1]) for r in records)
    for call_id, intent in started.items():
        n, key = intent.arguments.get("n"), intent.idempotency_key
        done = completed.get(call_id, [])
        if len(done) != 1:
            problems.append(f"{run} {call_id}: {len(done)} tool_completed events")
        for result in done:
            if result.is_error:
                problems.append(f"{run} {call_id}: tool_completed is an error the model was shown: {result.output!r}")
        mine = [r for r in rows if int(r[1]) == n]
        if len(mine) != 1:
            problems.append(f"{run} {call_id} (n={n}): {len(mine)} rows in the datasource, not 1")
        elif mine[0][2] != key:
            problems.append(f"{run} {call_id}: its row carries key {mine[0][2]}, the call's is {key}")
        if record_ids[call_id] != 1:
            problems.append(f"{run} {call_id}: {record_ids[call_id]} completion records, not 1")
    ns = {intent.arguments.get("n") for intent in started.values()}
    for n, count in per_n.items():
        if n not in ns:
            problems.append(f"{run}: {count} row(s) with n={n}, which no call of the run wrote")
    return problems


def _tool_calls(event: Event) -> list[dict[str, Any]]:
    message = event.data.message  # type: ignore[union-attr]
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls or ()]


_SHOWN = ("step", "call_id", "attempt", "arguments", "message", "is_error", "output", "recovered", "error", "reason")


def describe(events: Sequence[Event]) -> list[str]:
    """One line per event: its seq, type and what tells calls apart (long texts cut)."""
    out = []
    for event in events:
        payload = event_to_dict(event)
        keep = {k: payload[k] for k in _SHOWN if k in payload}
        text = json.dumps(keep, default=str)
        out.append(f"{event.seq:3d} {event.type:24s} {text[:300]}")
    return out
