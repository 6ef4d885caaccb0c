"""Temporal's history stays small: what grows with the conversation stays in the store.

A run over a conversation of 200k characters, thirteen model calls deep: each model call's
activity carries references to the run's messages in the store (ranges), not the messages,
so its bytes in the history do not grow with the call's position or the conversation's size,
and no event of the history holds the conversation (strings over `INLINE_LIMIT`, 16k
characters, travel as references even when the run is loaded).
"""

from __future__ import annotations

import json
from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon import Message
from eudaimon.temporal import TemporalEngine


async def model_call_bytes(client: Client, run_id: str) -> tuple[list[int], int]:
    """Bytes each model activity put in the history (its input and its result), in order,
    and the bytes of the history's biggest event."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    sizes: dict[int, int] = {}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            if scheduled.activity_type.name == "eudaimon.model":
                sizes[event.event_id] = sum(len(p.data) for p in scheduled.input.payloads)
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            if done.scheduled_event_id in sizes:
                sizes[done.scheduled_event_id] += sum(len(p.data) for p in done.result.payloads)
    biggest = max(len(json.dumps(e)) for e in json.loads(history.to_json())["events"])
    return [sizes[k] for k in sorted(sizes)], biggest


async def test_bytes_per_model_call_are_flat_and_the_conversation_stays_out(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    conversation = [Message.user("background " + "x" * 200_000), Message.assistant("noted")]
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        done = await agent.prompt("many lookups", message_history=conversation)
        per_call, biggest = await model_call_bytes(client, done.run_id)
        await agent.aclose()
    assert len(per_call) == 13
    print(f"history bytes per model call: {per_call}; biggest event {biggest} bytes")
    assert max(per_call) < 3_000  # references, not the 200k conversation
    assert max(per_call[6:]) <= max(per_call[:6]) + 200  # no growth with the call's position
    assert biggest < 5_000  # the conversation is nowhere in the history, not even at load
