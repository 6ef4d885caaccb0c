"""Large model turns stay in the store: Temporal's history holds references, and stays flat.

A run of six model calls, each answering with 40k characters and a tool call whose result is
40k characters: the conversation the last call is sent is ~400k characters. Every event of
the workflow's history stays far below Temporal's 2 MB payload limit, small enough that it
cannot hold one of the turns (they are stashed in the store, referenced), and the history's
bytes per model call (every event from one model call to the next) do not grow with the
call's position.
"""

from __future__ import annotations

from pathlib import Path

from _fleet import in_process_worker
from long_turns_agent import CALLS, TURN, make, make_copying
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine


async def history_per_model_call(client: Client, run_id: str) -> tuple[list[int], int]:
    """Bytes of the history from each model call's scheduling to the next one's, in order, and
    the bytes of the biggest event."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    per_call: list[int] = []
    biggest = 0
    for event in history.events:
        size = event.ByteSize()
        biggest = max(biggest, size)
        scheduled = event.activity_task_scheduled_event_attributes
        if (
            event.HasField("activity_task_scheduled_event_attributes")
            and scheduled.activity_type.name == "eudaimon.model"
        ):
            per_call.append(0)
        if per_call:
            per_call[-1] += size
    return per_call, biggest


async def test_large_model_turns_leave_every_history_event_small_and_each_call_flat(
    client: Client, temporal_target: str, task_queue: str, store_url: str, tmp_path: Path
) -> None:
    async with in_process_worker(client, task_queue, store_url, spec="long_turns_agent:make"):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        done = await agent.prompt("read the document")
        per_call, biggest = await history_per_model_call(client, done.run_id)
        await agent.aclose()
    assert done.text() == f"read {CALLS - 1} pages; sent {2 * TURN * (CALLS - 1) + len('read the document')} characters"
    print(f"history bytes per model call: {per_call}; biggest event {biggest} bytes")
    assert len(per_call) == CALLS
    assert biggest < TURN // 4  # no event holds a turn: each travels as a reference
    # The first call carries no tool result to append (a READ call's input, a local activity's,
    # is not in the history); the last answers, and the run ends: fewer events.
    first, steps = per_call[0], per_call[1:-1]
    assert first <= min(steps)
    assert max(steps) <= min(steps) * 1.2  # flat: no growth with the call's position


async def test_messages_a_middleware_copies_still_travel_as_references(
    client: Client, temporal_target: str, task_queue: str, store_url: str, tmp_path: Path
) -> None:
    """A middleware that passes the messages on as equal copies: the model activity still
    names them by position in the journal, so the history stays flat as without it."""
    async with in_process_worker(client, task_queue, store_url, spec="long_turns_agent:make_copying"):
        agent = make_copying(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        done = await agent.prompt("read the document")
        per_call, biggest = await history_per_model_call(client, done.run_id)
        await agent.aclose()
    print(f"history bytes per model call, messages copied: {per_call}; biggest event {biggest} bytes")
    assert done.text().startswith(f"read {CALLS - 1} pages")
    assert biggest < TURN // 4
    first, steps = per_call[0], per_call[1:-1]
    assert first <= min(steps)
    assert max(steps) <= min(steps) * 1.2
