"""One loop: a run on Temporal journals what the same run journals locally, in one store.

The workflow drives `eudaimon.runtime.loop.loop.drive` itself, so the same scripted conversation
must produce the same sequence of event types, gap-free in the configured store, whether the
process that prompts drives it or a worker does; and everything that reads the store
(`state` at any seq, `fork`, `prompt_stream`) works on a Temporal run unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.codec import state_from_json
from eudaimon.core.events import ModelCalled
from eudaimon.streaming import Done, StreamEvent, TextDelta, ToolCallDelta, ToolCallStart, ToolResult
from eudaimon.temporal import TemporalEngine


def engine(target: str, queue: str) -> TemporalEngine:
    return TemporalEngine(target, task_queue=queue, heartbeat_timeout_s=5)


@pytest.mark.parametrize("script", ["read then write", "parallel", "wire money"])
async def test_same_event_types_locally_and_on_temporal(
    client: Client, temporal_target: str, task_queue: str, tmp_path: Path, ledger: Path, script: str
) -> None:
    """The same scripted conversation journals the same event types, in order, on both."""
    local = make(store=f"sqlite:///{tmp_path / 'local.db'}")
    fleet_url = f"sqlite:///{tmp_path / 'fleet.db'}"
    async with in_process_worker(client, task_queue, fleet_url):
        on_fleet = engine(temporal_target, task_queue)
        fleet = make(store=fleet_url, engine=on_fleet)
        here = await local.prompt(script)
        there = await fleet.prompt(script)
        assert there.status == here.status
        assert there.text() == here.text()
        local_events = await local.store.load(here.run_id)
        fleet_events = await fleet.store.load(there.run_id)
        assert [e.type for e in fleet_events] == [e.type for e in local_events]
        assert [e.seq for e in fleet_events] == list(range(len(fleet_events)))
        assert getattr(fleet_events[0].data, "engine", None) == on_fleet.url
        await local.aclose()
        await fleet.aclose()


async def test_stream_state_and_fork_of_a_temporal_run(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """`prompt_stream` follows the journal, tool calls with their arguments; `state(at_seq)` and
    the workflow's state Query agree with a fold of the store; a fork of a Temporal run resumes
    on the fleet."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=engine(temporal_target, task_queue))
        streamed = [event async for event in agent.prompt_stream("read then write")]
        done = streamed[-1]
        assert isinstance(done, Done) and done.status == "completed"
        results = [e.content for e in streamed if isinstance(e, ToolResult)]
        assert results == ["value of a", "charged 5"]
        assert "".join(e.text for e in streamed if isinstance(e, TextDelta)).startswith("done: value of a")

        events = await agent.store.load(done.run_id)
        journaled = [
            (call.name, call.arguments)
            for e in events
            if isinstance(e.data, ModelCalled)
            for call in e.data.message.tool_calls
        ]
        assert len(journaled) == 2 and all(arguments for _, arguments in journaled)
        assert streamed_calls(streamed) == journaled
        middle = next(e.seq for e in events if e.type == "tool_completed")
        at_middle = await agent.state(done.run_id, at_seq=middle)
        queried = state_from_json(await client.get_workflow_handle(done.run_id).query("state", middle))
        assert queried is not None
        assert queried.next_seq == at_middle.next_seq == middle + 1
        assert [m.id for m in queried.messages] == [m.id for m in at_middle.messages]

        child = await agent.fork(done.run_id, middle)
        resumed = await agent.resume(child)
        assert resumed.status == "completed"
        assert resumed.text() == (await agent.state(done.run_id)).output
        await agent.aclose()


def streamed_calls(streamed: list[StreamEvent]) -> list[tuple[str, object]]:
    """The tool calls a stream told, each its name and its arguments put together from deltas."""
    names: dict[str, str] = {}
    pieces: dict[str, list[str]] = {}
    for event in streamed:
        if isinstance(event, ToolCallStart):
            names[event.id], pieces[event.id] = event.name, []
        elif isinstance(event, ToolCallDelta):
            pieces[event.id].append(event.arguments_delta)
    return [(names[i], json.loads("".join(pieces[i]))) for i in names]
