"""Images and documents a tool returns reach the journal from a worker as they do locally.

The tool activity returns the tool's content parts beside its text; binary content larger than
the engine's inline limit travels as a store reference that still decodes as base64, so the
workflow holds it as bytes and the append writes the content itself.
"""

from __future__ import annotations

from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.core.events import Event, ToolCompleted
from eudaimon.temporal import TemporalEngine


async def test_tool_parts_are_journaled_as_locally(
    client: Client, temporal_target: str, task_queue: str, tmp_path: Path
) -> None:
    """`tool_completed.parts` (a 5000-byte image, by reference; a 40-byte one, inline) and
    the text the model read are the same on the fleet as locally."""
    local = make(store=f"sqlite:///{tmp_path / 'local.db'}")
    fleet_url = f"sqlite:///{tmp_path / 'fleet.db'}"
    async with in_process_worker(client, task_queue, fleet_url):
        fleet = make(store=fleet_url, engine=TemporalEngine(temporal_target, task_queue=task_queue, inline_limit=1000))
        here = await local.prompt("picture")
        there = await fleet.prompt("picture")
        assert there.text() == here.text()

        def completed(events: list[Event]) -> list[ToolCompleted]:
            return [e.data for e in events if isinstance(e.data, ToolCompleted)]

        local_calls = completed(await local.store.load(here.run_id))
        fleet_calls = completed(await fleet.store.load(there.run_id))
        assert [(c.output, c.parts) for c in fleet_calls] == [(c.output, c.parts) for c in local_calls]
        assert [len(c.parts[0].data or b"") for c in fleet_calls] == [5000, 40]  # type: ignore[union-attr]
        tool_messages = [m for m in (await fleet.state(there.run_id)).messages if m.role == "tool"]
        assert [m.parts for m in tool_messages] == [c.parts for c in local_calls]
        await local.aclose()
        await fleet.aclose()
