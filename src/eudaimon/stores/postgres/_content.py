"""The texts and messages events point to (`eudaimon.stores.packing`), kept in PostgreSQL.

Each is stored once, however many runs point to it, and freed with the last run that does:
- a text counts its references (`refs`): one per event that names it and one per stored
  message whose content it is;
- `message_refs` records the ranges of messages each run's `run_started` names, so deleting a
  run frees the messages in its ranges that no other range covers.

Every function here runs inside the caller's transaction; `store` and `release` take the
content lock first (why: see `_sql`). Digests are kept as 16-byte `bytea` (hex in the JSON rows).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from eudaimon.core.events import Event
from eudaimon.stores.packing import PackedBatch, Row, StoredRows, direct_text_refs, split_names, uncovered
from eudaimon.stores.postgres._sql import Statements

_Connection = AsyncConnection[TupleRow]


async def store(conn: _Connection, sql: Statements, packed: PackedBatch) -> dict[str, Any]:
    """Insert the messages `packed` lacks; the parameters the content claim adds to an append's:
    the texts to count (in digest order), the run's message ranges, and with messages the rows'
    payloads, which name them by number."""
    await conn.execute(sql.share_content)
    keys, added = await _message_keys(conn, sql, packed) if packed.messages else ({}, set())
    refs = Counter(packed.direct_texts)
    for name in added:
        if text := packed.message_texts[name]:
            refs.update(split_names(text))
    names = sorted(refs)
    spans = _merged(packed.message_ranges(keys))
    return {
        **({"payloads": packed.payloads(keys)} if packed.messages else {}),
        "text_digests": [bytes.fromhex(name) for name in names],
        "text_refs": [refs[name] for name in names],
        "text_bodies": [packed.texts[name] for name in names],
        "los": [lo for lo, _ in spans],
        "his": [hi for _, hi in spans],
    }


async def _message_keys(conn: _Connection, sql: Statements, packed: PackedBatch) -> tuple[dict[str, int], set[str]]:
    """Every message's number, inserting the new ones in order; and which ones were new."""
    names = list(packed.messages)
    texts = [packed.message_texts[name] for name in names]
    params = {
        "digests": [bytes.fromhex(name) for name in names],
        "bodies": [packed.messages[name] for name in names],
        "texts": [bytes.fromhex(text) if text else None for text in texts],
    }
    rows = await (await conn.execute(sql.insert_messages, params)).fetchall()
    keys = {bytes(digest).hex(): int(key) for digest, key, _ in rows}
    added = {bytes(digest).hex() for digest, _, new in rows if new}
    missing = [bytes.fromhex(name) for name in names if name not in keys]
    if missing:  # stored by a transaction that committed while this one waited on it
        found = await (await conn.execute(sql.message_keys, (missing,))).fetchall()
        keys.update((bytes(digest).hex(), int(key)) for digest, key in found)
    return keys, added


async def load(conn: _Connection, sql: Statements, run_id: str, rows: Iterable[Row], after_seq: int) -> list[Event]:
    """The events of `rows`, every message and text they name read back.

    Raises:
        CorruptEvent: a row does not parse, or names a message or text the store does not have.
    """
    stored = StoredRows.parse(run_id, rows, after_seq)
    spans = stored.message_ranges()
    if spans:
        bounds = ([lo for lo, _ in spans], [lo + count - 1 for lo, count in spans])
        found = await (await conn.execute(sql.load_messages, bounds)).fetchall()
        stored.add_messages({int(key): body for key, body in found})
    texts: dict[str, str] = {}
    digests = _digests(stored.text_digests())
    if digests:
        found = await (await conn.execute(sql.load_texts, (digests,))).fetchall()
        texts = {bytes(digest).hex(): body for digest, body in found}
    return stored.events(texts)


async def release(conn: _Connection, sql: Statements, run_id: str) -> bool:
    """Drop the run's references (before its events are deleted) and delete what no other run
    reaches; whether anything changed."""
    await conn.execute(sql.lock_content)
    refs: Counter[str] = Counter()
    for (payload,) in await (await conn.execute(sql.text_payloads, (run_id,))).fetchall():
        refs.update(_direct_refs(payload))
    overlaps = await (await conn.execute(sql.drop_message_refs, {"run": run_id})).fetchall()
    gaps = _gaps(overlaps)
    if gaps:
        freed = await (await conn.execute(sql.delete_messages, ([a for a, _ in gaps], [b for _, b in gaps]))).fetchall()
        for (text,) in freed:
            if text is not None:
                refs.update(split_names(bytes(text).hex()))
    if refs:
        names = sorted(refs)
        digests = [bytes.fromhex(name) for name in names]
        await conn.execute(sql.release_texts, (digests, [refs[name] for name in names]))
        await conn.execute(sql.delete_texts, (digests,))
    return bool(overlaps or refs)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The (lo, hi) ranges covering the (first, count) `spans`: overlapping ones merged, so a
    history that repeats a message records each number once and each `lo` once."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted((first, first + count - 1) for first, count in spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _gaps(overlaps: Sequence[tuple[Any, ...]]) -> list[tuple[int, int]]:
    """The parts of each dropped range (lo, hi) that none of the other runs' ranges covers."""
    covered: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for lo, hi, other_lo, other_hi in overlaps:
        others = covered.setdefault((int(lo), int(hi)), [])
        if other_lo is not None:
            others.append((int(other_lo), int(other_hi)))
    return [gap for (lo, hi), others in covered.items() for gap in uncovered(lo, hi, others)]


def _digests(names: Iterable[str]) -> list[bytes]:
    """`names` as stored; one that is not hex (a row edited by hand) names nothing stored."""
    digests: list[bytes] = []
    for name in names:
        try:
            digests.append(bytes.fromhex(name))
        except ValueError:
            continue  # `StoredRows.events` reports it missing, naming the run and the seq
    return digests


def _direct_refs(payload: str) -> list[str]:
    try:
        parsed = json.loads(payload)
    except ValueError:
        return []  # a row that does not parse names nothing we could free
    names = direct_text_refs(parsed) if isinstance(parsed, dict) else []
    return [name for name in names if _digests([name])]
