"""`eudaimon runs list|show|events|state` read a run that has only its `run_queued`."""

from __future__ import annotations

import asyncio

from cli_support import Invoke

from eudaimon.core.events import RunQueued
from eudaimon.runtime.process.queued import enqueue
from eudaimon.stores.sqlite import SqliteStore


def _queue(store_url: str) -> None:
    async def go() -> None:
        store = SqliteStore(store_url.removeprefix("sqlite:///"))
        queued = RunQueued(agent="bank", input="pay 5 to ALICE", thread_id="t1", principal="alice")
        await enqueue(store, "run_q1", queued)
        await store.close()

    asyncio.run(go())


def test_a_queued_run_is_listed_shown_and_its_event_summarised(cli: Invoke, store_url: str) -> None:
    _queue(store_url)
    listed = cli("runs", "list", "--store", store_url)
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.output.splitlines() if "run_q1" in line)
    assert "queued" in row and "bank" in row
    shown = cli("runs", "show", "run_q1", "--store", store_url)
    assert shown.exit_code == 0 and "queued" in shown.output, shown.output
    events = cli("runs", "events", "run_q1", "--store", store_url)
    assert events.exit_code == 0 and "run_queued" in events.output and "asked by alice" in events.output, events.output
    state = cli("runs", "state", "run_q1", "--at", "0", "--store", store_url)
    assert state.exit_code == 0 and "queued" in state.output, state.output
