"""A bare Temporal workflow that sleeps, for the floor of `temporal_timer_lateness.py`: how late
the dev server's own timers fire, without eudaimon, on the same server and in the same minutes.

    python -m peers.bare_timer TARGET QUEUE     # a worker serving `BareTimer`, "ready" when polling
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from temporalio import workflow


@workflow.defn(name="BareTimer")
class BareTimer:
    @workflow.run
    async def run(self, seconds: float, times: int) -> list[float]:
        """Lateness of each of `times` sleeps of `seconds`, in ms, by the workflow's own clock
        (the time of the task that resumes it, as eudaimon's journal records its wakes)."""
        late = []
        for _ in range(times):
            before = workflow.now()
            await asyncio.sleep(seconds)
            late.append((workflow.now() - before - timedelta(seconds=seconds)).total_seconds() * 1000.0)
        return late


async def _serve(target: str, queue: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import UnsandboxedWorkflowRunner, Worker

    client = await Client.connect(target)
    worker = Worker(client, task_queue=queue, workflows=[BareTimer], workflow_runner=UnsandboxedWorkflowRunner())
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2]))
