"""The texts and messages events point to (`eudaimon.stores.packing`), kept in SQLite.

Each is stored once, however many runs point to it, and freed with the last run that does:
- a text counts its references (`refs`, on its head row): one per event that names it and
  one per stored message whose content it is;
- `message_refs` records the ranges of messages each run's `run_started` names, so deleting a
  run frees the messages in its ranges that no other range covers.

Digests are kept as 16-byte blobs (hex in the JSON rows): half the bytes in every table and index.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable

from eudaimon.core.events import Event
from eudaimon.stores.packing import PackedBatch, Row, StoredRows, direct_text_refs, split_names, uncovered

SCHEMA = (
    # A text is stored as a head row (its digest, how many parts, its references) followed at
    # the next ids by its other parts, each at most `_PART` characters: four to a 4 KiB page,
    # appended in order. Whole, a 4 KiB tool output would take a leaf page and an overflow page,
    # both partly empty. Only heads carry a digest, so only heads are indexed.
    """CREATE TABLE IF NOT EXISTS texts (
        id INTEGER PRIMARY KEY, digest BLOB, parts INTEGER, refs INTEGER NOT NULL DEFAULT 0, body TEXT NOT NULL)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS texts_by_digest ON texts (digest) WHERE digest IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS messages (
        key INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, body TEXT NOT NULL, text BLOB)""",
    """CREATE TABLE IF NOT EXISTS message_refs (
        run_id TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, PRIMARY KEY (run_id, lo)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS message_refs_by_lo ON message_refs (lo, hi)",
)
_PART = 980
"""Characters per stored part of a text."""
_CHUNK = 500
"""Parameters per `IN (…)` list, well under SQLite's limit."""


def store(conn: sqlite3.Connection, run_id: str, batch: PackedBatch) -> list[str]:
    """Insert what `batch` needs and count the references it makes; the rows' payload JSON."""
    if not (batch.texts or batch.messages or batch.direct_texts):
        return batch.payloads()  # most batches of a step: nothing to store or count
    for name, body in batch.texts.items():
        digest = bytes.fromhex(name)
        if conn.execute("SELECT 1 FROM texts WHERE digest = ?", (digest,)).fetchone() is None:
            head, *rest = _split(body)
            conn.execute("INSERT INTO texts (digest, parts, body) VALUES (?, ?, ?)", (digest, 1 + len(rest), head))
            conn.executemany("INSERT INTO texts (body) VALUES (?)", [(part,) for part in rest])
    refs = Counter(batch.direct_texts)
    keys = _message_keys(conn, list(batch.messages))
    for name, body in batch.messages.items():
        if name in keys:
            continue
        text = batch.message_texts[name]
        text_digest = bytes.fromhex(text) if text else None
        sql = "INSERT INTO messages (digest, body, text) VALUES (?, ?, ?)"
        keys[name] = int(conn.execute(sql, (bytes.fromhex(name), body, text_digest)).lastrowid or 0)
        if text:
            refs.update(split_names(text))
    _count(conn, refs, +1)
    if keys:
        spans = [(run_id, lo, lo + count - 1) for lo, count in batch.message_ranges(keys)]
        conn.executemany("INSERT OR IGNORE INTO message_refs (run_id, lo, hi) VALUES (?, ?, ?)", spans)
    return batch.payloads(keys)


def load(conn: sqlite3.Connection, run_id: str, rows: Iterable[Row], after_seq: int) -> list[Event]:
    """The events of `rows`, every text and message they name read back."""
    stored = StoredRows.parse(run_id, rows, after_seq)
    bodies: dict[int, str] = {}
    for lo, count in stored.message_ranges():
        sql = "SELECT key, body FROM messages WHERE key BETWEEN ? AND ?"
        bodies.update(conn.execute(sql, (lo, lo + count - 1)).fetchall())
    stored.add_messages(bodies)
    texts: dict[str, str] = {}
    for name in stored.text_digests():
        head = conn.execute("SELECT id, parts FROM texts WHERE digest = ?", (bytes.fromhex(name),)).fetchone()
        if head is not None:
            sql = "SELECT body FROM texts WHERE id BETWEEN ? AND ? ORDER BY id"
            texts[name] = "".join(part for (part,) in conn.execute(sql, (head[0], head[0] + head[1] - 1)))
    return stored.events(texts)


def release(conn: sqlite3.Connection, run_id: str) -> None:
    """Drop the run's references (call before deleting its events); delete what no run reaches."""
    refs: Counter[str] = Counter()
    for (payload,) in conn.execute("SELECT payload FROM events WHERE run_id = ?", (run_id,)):
        refs.update(_direct_refs(payload))
    spans = conn.execute("SELECT lo, hi FROM message_refs WHERE run_id = ?", (run_id,)).fetchall()
    conn.execute("DELETE FROM message_refs WHERE run_id = ?", (run_id,))
    for lo, hi in spans:
        others = conn.execute("SELECT lo, hi FROM message_refs WHERE lo <= ? AND hi >= ?", (hi, lo)).fetchall()
        for a, b in uncovered(lo, hi, others):
            sql = "SELECT text FROM messages WHERE key BETWEEN ? AND ? AND text IS NOT NULL"
            for (text,) in conn.execute(sql, (a, b)):
                refs.update(split_names(text.hex()))
            conn.execute("DELETE FROM messages WHERE key BETWEEN ? AND ?", (a, b))
    _count(conn, refs, -1)
    for name in refs:
        sql = "SELECT id, parts FROM texts WHERE digest = ? AND refs <= 0"
        head = conn.execute(sql, (bytes.fromhex(name),)).fetchone()
        if head is not None:
            conn.execute("DELETE FROM texts WHERE id BETWEEN ? AND ?", (head[0], head[0] + head[1] - 1))


def _message_keys(conn: sqlite3.Connection, names: list[str]) -> dict[str, int]:
    """The numbers of the messages among `names` already stored."""
    keys: dict[str, int] = {}
    for at in range(0, len(names), _CHUNK):
        chunk = [bytes.fromhex(name) for name in names[at : at + _CHUNK]]
        sql = f"SELECT digest, key FROM messages WHERE digest IN ({','.join('?' * len(chunk))})"
        keys.update((digest.hex(), int(key)) for digest, key in conn.execute(sql, chunk))
    return keys


def _count(conn: sqlite3.Connection, refs: Counter[str], sign: int) -> None:
    rows = [(sign * n, bytes.fromhex(name)) for name, n in refs.items()]
    conn.executemany("UPDATE texts SET refs = refs + ? WHERE digest = ?", rows)


def _split(body: str) -> list[str]:
    """`body` in equal parts of at most `_PART` characters (equal, so that no sliver of a part
    leaves most of a page's last slot empty)."""
    count = -(-len(body) // _PART) or 1
    size = -(-len(body) // count) or 1
    return [body[at : at + size] for at in range(0, max(len(body), 1), size)]


def _direct_refs(payload: str) -> list[str]:
    try:
        parsed = json.loads(payload)
    except ValueError:
        return []  # a row that does not parse names nothing we could free
    return direct_text_refs(parsed) if isinstance(parsed, dict) else []
