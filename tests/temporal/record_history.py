"""Record the workflow history fixture the replay test holds today's code against.

    cd tests/temporal && python record_history.py HOST:PORT

runs "wire money" (an approval Update, then the tool) against a Temporal server at HOST:PORT
with an in-process worker, and writes `histories/wire_money_approved.json`. Re-record only
when a deliberate change to the workflow makes old histories unreplayable (and say so: runs
in flight when such a change is deployed would fail).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine

FIXTURE = Path(__file__).parent / "histories" / "wire_money_approved.json"


async def record(target: str) -> None:
    client = await Client.connect(target)
    queue = f"record-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/journal.db"
        async with in_process_worker(client, queue, url):
            agent = make(store=url, engine=TemporalEngine(target, task_queue=queue))
            waiting = await agent.prompt("wire money")
            [call] = waiting.pending_approvals
            await agent.approve(waiting.run_id, call.id, True, by="recorder")
            assert (await agent.resume(waiting.run_id)).status == "completed"
            history = await client.get_workflow_handle(waiting.run_id).fetch_history()
            FIXTURE.write_text(history.to_json())
            await agent.aclose()


if __name__ == "__main__":
    asyncio.run(record(sys.argv[1]))
