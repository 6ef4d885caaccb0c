"""A run still running is found by the tool names and call ids of its latest step, in every store.

SQLite leaves a running run's ids out of its full-text documents (every tool step would rewrite
them) and reads them off the row itself until the run waits or ends; a document left from an
earlier pause must neither hide the ids added since nor match what the run no longer shows.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from eudaimon.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    EventData,
    ModelCalled,
    RunStarted,
    ToolCompleted,
    ToolStarted,
)
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.core.run_index import RunRow
from eudaimon.stores import EventStore
from eudaimon.stores.index import RunQuery, select

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _called(step: int, *calls: ToolCall) -> ModelCalled:
    return ModelCalled(
        step=step, request_id=f"q{step}", message=Message.assistant("", tool_calls=list(calls)), usage=Usage(1, 1)
    )


async def _append(store: EventStore, run_id: str, seq: int, *data: EventData) -> int:
    at = T0 + timedelta(seconds=seq)
    await store.append(run_id, seq, [Event.of(run_id, seq + i, at, d) for i, d in enumerate(data)])
    return seq + len(data)


QUERIES = [
    "lookup",
    "call-first",
    "call-second",
    "fetch_page",
    "call-third",
    "kup\ncall",
    "wire\ncall-first",
    "nothing",
]


async def _agrees(store: EventStore, run_ids: list[str]) -> None:
    rows = []
    for run_id in run_ids:
        row = RunRow.of(await store.load(run_id))
        assert row is not None
        rows.append(row)
    for q in QUERIES:
        got = await store.query_runs(RunQuery(q=q))  # type: ignore[attr-defined]
        assert got == select(rows, RunQuery(q=q)), q


async def test_a_running_run_is_found_by_its_latest_ids(store: EventStore) -> None:
    first, second = ToolCall("call-first", "lookup", {}), ToolCall("call-second", "send_wire", {})
    third = ToolCall("call-third", "fetch_page", {})
    seq = await _append(store, "run-a", 0, RunStarted(agent="a", input="go", messages=(Message.user("go"),)))
    seq = await _append(store, "run-a", seq, _called(0, first))
    await _agrees(store, ["run-a"])  # running, one tool step
    seq = await _append(store, "run-a", seq, ToolStarted(call_id=first.id, tool=first.name, idempotency_key="k"))
    seq = await _append(store, "run-a", seq, ToolCompleted(call_id=first.id, tool=first.name, output="ok"))
    seq = await _append(store, "run-a", seq, _called(1, second))
    seq = await _append(store, "run-a", seq, ApprovalRequested(call_id=second.id, tool=second.name))
    await _agrees(store, ["run-a"])  # waiting: its ids are in its documents
    seq = await _append(store, "run-a", seq, ApprovalDecided(call_id=second.id, approved=False))
    seq = await _append(store, "run-a", seq, _called(2, third))
    await _agrees(store, ["run-a"])  # running again, with a tool and a call id added since the pause
