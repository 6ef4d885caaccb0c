"""One OS process in an append race: append to one run at every seq it can win.

`race` and `seq_winners` are also what `test_postgres_store`'s racing processes use, so the
race and its check are written once for every store.

Usage: python fence_writer.py DB_PATH RUN_ID TOTAL WRITER_NAME

It opens the store, prints `ready`, waits for a line on stdin (the start signal, so that every
writer starts together), then tries each seq from 0 until the journal holds TOTAL events: an
append that wins records the seq; a ConcurrencyConflict jumps to the journal's real next seq.
It prints one JSON line: {"writer", "won": [seqs], "conflicts": n}. The store is used from two
event loops in turn (warm-up, then the race), as the CLI does.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any

from eudaimon.core.errors import ConcurrencyConflict
from eudaimon.core.events import Event, EventData, ModelAttemptStarted, RunStarted
from eudaimon.stores.base import EventStore
from eudaimon.stores.sqlite import SqliteStore


async def warm_up(store: SqliteStore) -> None:
    await store.list_runs(limit=1)  # opens the file and creates the schema, racing the others


async def race(store: EventStore, run_id: str, total: int, writer: str) -> dict[str, object]:
    won: list[int] = []
    conflicts = 0
    seq = 0
    while seq < total:
        data: EventData = (
            RunStarted(agent=writer, input="race", messages=())
            if seq == 0
            else ModelAttemptStarted(step=seq, request_id=f"{writer}:{seq}", request_digest="")
        )
        try:
            await store.append(run_id, seq, [Event.of(run_id, seq, datetime.now(UTC), data)])
        except ConcurrencyConflict as conflict:
            conflicts += 1
            if conflict.actual_seq <= seq:
                raise AssertionError(f"{writer}: conflict at {seq} names next seq {conflict.actual_seq}") from None
            seq = conflict.actual_seq
        else:
            won.append(seq)
            seq += 1
    await store.close()
    return {"writer": writer, "won": won, "conflicts": conflicts, "commits": getattr(store, "commit_count", None)}


def seq_winners(reports: list[dict[str, Any]], total: int) -> dict[int, str]:
    """Check the race's reports: each seq won by exactly one writer, no seq missing, and only won
    appends cost a commit (a refused append writes nothing). Returns seq -> winner."""
    winner: dict[int, str] = {}
    for report in reports:
        for seq in report["won"]:
            assert seq not in winner, f"seq {seq} won by both {winner[seq]} and {report['writer']}"
            winner[seq] = report["writer"]
        assert report["commits"] == len(report["won"])
    assert sorted(winner) == list(range(total))
    return winner


def main() -> None:
    path, run_id, total, writer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    store = SqliteStore(path)
    asyncio.run(warm_up(store))
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps(asyncio.run(race(store, run_id, total, writer))), flush=True)


if __name__ == "__main__":
    main()
