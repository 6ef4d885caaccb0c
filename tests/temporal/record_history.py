"""Record the workflow history fixtures the replay test holds today's code against.

    cd tests/temporal && python record_history.py HOST:PORT [NAME]

runs, against a Temporal server at HOST:PORT with an in-process worker, and writes under
`histories/`:

- `wire_money_approved.json`: "wire money" (an approval Update, then the tool), recorded
  before content parts, snapshots, stash deletion and continue-as-new: that it still replays
  shows that runs in flight survive the deploy of those;
- `picture_by_reference.json`: "picture" with a low inline limit (a tool's image parts, one
  by reference), then the stash deleted at the end.

Re-record one only when a deliberate change to the workflow makes old histories unreplayable
(and say so: runs in flight when such a change is deployed would fail).
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

HISTORIES = Path(__file__).parent / "histories"


async def record(target: str, name: str) -> None:
    client = await Client.connect(target)
    queue = f"record-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/journal.db"
        async with in_process_worker(client, queue, url):
            if name == "wire_money_approved":
                agent = make(store=url, engine=TemporalEngine(target, task_queue=queue))
                waiting = await agent.prompt("wire money")
                [call] = waiting.pending_approvals
                await agent.approve(waiting.run_id, call.id, True, by="recorder")
                run_id = waiting.run_id
            else:
                agent = make(store=url, engine=TemporalEngine(target, task_queue=queue, inline_limit=1000))
                run_id = (await agent.prompt("picture")).run_id
            handle = client.get_workflow_handle(run_id)
            assert await handle.result() == "completed"
            (HISTORIES / f"{name}.json").write_text((await handle.fetch_history()).to_json())
            await agent.aclose()


if __name__ == "__main__":
    asyncio.run(record(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "picture_by_reference"))
