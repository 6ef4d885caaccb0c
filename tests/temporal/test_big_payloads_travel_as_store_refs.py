"""Payloads over Temporal's size limit do not break a run: they travel as store references.

Temporal refuses payloads over about 2 MB. A tool output of 3 MB and a 3 MB message in the
history the run starts with must reach the journal (and the model) whole, while no event in
the workflow's history carries them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon import Message
from eudaimon.temporal import TemporalEngine

BIG = 3_000_000


async def _largest_history_event(client: Client, run_id: str) -> int:
    history = await client.get_workflow_handle(run_id).fetch_history()
    return max(event.ByteSize() for event in history.events)


async def test_a_huge_tool_output_reaches_the_journal_whole(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A 3 MB tool output is journaled whole and shown to the model; history stays small."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        response = await agent.prompt("big output")
        assert response.status == "completed"
        assert response.text() == "done: " + "x" * 60  # the model saw the output's content
        events = await agent.store.load(response.run_id)
        [completed] = [e.data for e in events if e.type == "tool_completed"]
        assert completed.output == "x" * BIG  # type: ignore[union-attr]
        assert await _largest_history_event(client, response.run_id) < 64 * 1024
        await agent.aclose()


async def test_a_huge_message_in_the_starting_history_is_sent_by_reference(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A run that starts with a 3 MB message loads, calls the model and completes on the fleet."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        history = [Message.user("y" * BIG), Message.assistant("noted"), Message.user("say hello")]
        response = await agent.prompt_with_messages(history)
        assert response.status == "completed"
        assert response.text() == f"hello (longest message sent: {BIG} chars)"  # the model got it whole
        state = await agent.state(response.run_id)
        assert len(state.messages[0].content) == BIG
        assert await _largest_history_event(client, response.run_id) < 64 * 1024
        await agent.aclose()


async def test_many_long_messages_under_the_limit_still_fit_one_payload(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """Twelve messages of 200,000 characters each stay under the inline limit one by one, but
    together (the run's first event) are 2.4 MB, over Temporal's payload limit: what the run
    loads is stashed more finely until it fits, and the run completes with every message whole."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        long = [Message.user(chr(ord("a") + i) * 200_000) for i in range(12)]
        history = [*long, Message.assistant("noted"), Message.user("say hello")]
        async with asyncio.timeout(120):  # a payload Temporal refuses leaves the run stuck, not failed
            response = await agent.prompt_with_messages(history)
        assert response.status == "completed"
        sent = sum(len(m.content) for m in history)
        assert response.text() == f"hello (characters sent: {sent})"  # the model got them whole
        state = await agent.state(response.run_id)
        assert [m.content for m in state.messages[:12]] == [m.content for m in long]
        assert await _largest_history_event(client, response.run_id) < 1024 * 1024
        await agent.aclose()


async def test_a_journal_too_big_for_any_payload_fails_saying_so(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """A history of 40,000 short messages is over Temporal's payload limit however its strings
    are stored: the run ends with an error that says so and what to do, instead of waiting
    forever on a result Temporal refuses; the journal keeps what it was given."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        history = [Message.user(f"note {i}: " + "z" * 40) for i in range(40_000)]
        async with asyncio.timeout(120):
            try:
                response = await agent.prompt_with_messages(history)
            except Exception as exc:
                problem = str(exc)
            else:
                problem = str(response.error)
        assert "workflow failed" in problem and "MB as JSON" in problem and "without the fleet" in problem
        await agent.aclose()
