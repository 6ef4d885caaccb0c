"""A journal row that does not parse is a loud error naming the run and the seq, never skipped.

Rows are edited by hand in a real SQLite file, as a disk fault, a bad migration or a newer
eudaimon would leave them; then the journal is read back through a fresh `SqliteStore`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eudaimon.core.errors import CorruptEvent, UnknownEventType
from eudaimon.stores.sqlite import SqliteStore

RUN = "run-corrupt"


async def write_run(db: Path, samples: Any) -> None:
    store = SqliteStore(db)
    try:
        payloads = [samples.started(), samples.attempt(0), samples.attempt(1), samples.attempt(2)]
        await store.append(RUN, 0, samples.make_events(RUN, payloads))
    finally:
        await store.close()


def edit(db: Path, sql: str, *args: object) -> None:
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        assert conn.execute(sql, args).rowcount == 1


async def load(db: Path, after_seq: int = -1) -> list[Any]:
    store = SqliteStore(db)
    try:
        return await store.load(RUN, after_seq)
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        pytest.param('{"step": 1, "request_id": ', "invalid JSON", id="truncated-json"),
        pytest.param("not json at all", "invalid JSON", id="garbage"),
        pytest.param("[1, 2, 3]", "not a JSON object", id="json-array"),
        pytest.param('{"request_id": "r", "request_digest": ""}', "step", id="missing-required-field"),
        pytest.param('{"step": "two", "request_id": "r", "request_digest": ""}', "step", id="wrong-field-type"),
    ],
)
async def test_row_with_bad_payload_raises_corrupt_event_naming_run_and_seq(
    tmp_path: Path, samples: Any, payload: str, detail: str
) -> None:
    """Invariant: a row whose payload does not parse makes `load` raise CorruptEvent naming the run
    id, the seq and the type; the load does not skip it and return the rest."""
    db = tmp_path / "runs.db"
    await write_run(db, samples)
    edit(db, "UPDATE events SET payload = ? WHERE run_id = ? AND seq = 2", payload, RUN)

    with pytest.raises(CorruptEvent) as raised:
        await load(db)

    error = raised.value
    assert (error.run_id, error.seq, error.event_type) == (RUN, 2, "model_attempt_started")
    assert f"run {RUN} seq 2" in str(error)
    assert detail in str(error)
    # The rows before and after are intact: the error is about that row, not the file.
    assert [e.seq for e in await load(db, after_seq=2)] == [3]


async def test_row_of_unknown_type_raises_unknown_event_type_naming_run_and_seq(tmp_path: Path, samples: Any) -> None:
    """Invariant: an event type this eudaimon does not know (a newer writer, another program) makes
    `load` raise UnknownEventType naming the run id, the seq and the type — never skipped."""
    db = tmp_path / "runs.db"
    await write_run(db, samples)
    edit(db, "UPDATE events SET type = 'tool_teleported' WHERE run_id = ? AND seq = 3", RUN)

    with pytest.raises(UnknownEventType) as raised:
        await load(db)

    error = raised.value
    assert (error.run_id, error.seq, error.event_type) == (RUN, 3, "tool_teleported")
    assert f"run {RUN} seq 3" in str(error)
    assert "'tool_teleported'" in str(error)


async def test_row_with_bad_time_raises_corrupt_event(tmp_path: Path, samples: Any) -> None:
    """Invariant: a broken envelope column (`at`) is a CorruptEvent naming run and seq, too."""
    db = tmp_path / "runs.db"
    await write_run(db, samples)
    edit(db, "UPDATE events SET at = 'yesterday' WHERE run_id = ? AND seq = 1", RUN)

    with pytest.raises(CorruptEvent) as raised:
        await load(db)

    assert (raised.value.run_id, raised.value.seq) == (RUN, 1)


async def test_missing_row_raises_corrupt_event_naming_the_missing_seq(tmp_path: Path, samples: Any) -> None:
    """Invariant: seqs are gap-free; a deleted row makes `load` raise CorruptEvent naming the
    missing seq instead of returning a journal with a hole."""
    db = tmp_path / "runs.db"
    await write_run(db, samples)
    edit(db, "DELETE FROM events WHERE run_id = ? AND seq = 1", RUN)

    with pytest.raises(CorruptEvent) as raised:
        await load(db)

    assert (raised.value.run_id, raised.value.seq) == (RUN, 1)
    assert f"run {RUN} seq 1" in str(raised.value)
