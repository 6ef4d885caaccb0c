"""A driver that takes a run over from one lost mid-run journals `run_taken_over` (who, from
whom when it saw the lost driver's lease, after how long) and logs one line; a run resumed after
a person's decision, or one that was never driven, records no takeover."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from eudaimon import Agent
from eudaimon.core.events import RunTakenOver
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.process.takeover import seconds
from eudaimon.stores.sqlite import SqliteStore

hang = asyncio.Event()


async def _model(request: ChatRequest) -> str:
    if not hang.is_set():
        await asyncio.sleep(3600)  # the first driver is "lost" in this call
    return "done"


async def test_a_takeover_names_both_drivers_and_the_time_without_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Invariant: the lost driver's run resumed by another records one `run_taken_over` right
    after the lost driver's last event, naming the lease holder it found, and logs one line."""
    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(FunctionModel(_model, "m"), store=store, memory=None)
    first = asyncio.create_task(agent.prompt("go", run_id="r1"))
    while not any(e.type == "model_attempt_started" for e in await store.load("r1")):
        await asyncio.sleep(0.01)
    first.cancel()  # the driver stops mid call (a crash, as far as the journal can tell)
    await asyncio.gather(first, return_exceptions=True)
    await store.acquire_lease("run:r1", "ghost:1:dead.0", 0.3)  # a lost driver's lease, still live
    hang.set()
    with caplog.at_level(logging.WARNING, logger="eudaimon.recovery"):
        answer = await agent.resume("r1")
    assert answer.final_text == "done"
    events = await store.load("r1")
    taken = [e for e in events if isinstance(e.data, RunTakenOver)]
    assert len(taken) == 1
    data = taken[0].data
    assert isinstance(data, RunTakenOver)
    assert data.previous_owner == "ghost:1:dead.0" and data.owner != data.previous_owner
    assert events[data.interrupted_seq].type == "model_attempt_started" and taken[0].seq == data.interrupted_seq + 1
    assert data.orphaned_ms >= 250  # it waited out the ghost's lease
    lines = [r.getMessage() for r in caplog.records if "taken over" in r.getMessage()]
    assert lines == [
        f"run r1 taken over by {data.owner} from ghost:1:dead.0 (its last event #{data.interrupted_seq}), "
        f"orphaned for {seconds(data.orphaned_ms)}"
    ]
    await store.close()


async def test_a_run_that_ends_in_one_drive_records_no_takeover(tmp_path: Path) -> None:
    """Invariant: a run driven start to end by one driver has no `run_taken_over`."""
    hang.set()
    store = SqliteStore(tmp_path / "runs.db")
    await Agent(FunctionModel(_model, "m"), store=store, memory=None).prompt("go", run_id="r2")
    assert not [e for e in await store.load("r2") if e.type == "run_taken_over"]
    await store.close()


def test_durations_read_as_the_inspector_writes_them() -> None:
    """Invariant: the log line's durations use the inspector's one style (`millis` in shared.js)."""
    assert [seconds(ms) for ms in (850, 7219, 11_700, 125_000, 3_723_000)] == [
        "850 ms",
        "7.2 s",
        "11.7 s",
        "2 min 05 s",
        "1 h 02 min",
    ]
