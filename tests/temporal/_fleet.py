"""Helpers for the fleet tests: workers in this process and in processes of their own."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from temporalio.client import Client

from eudaimon.stores.url import open_store
from eudaimon.temporal import create_worker

HERE = Path(__file__).parent


@contextlib.asynccontextmanager
async def in_process_worker(client: Client, task_queue: str, store_url: str) -> AsyncIterator[None]:
    """A worker in this process serving `fleet_agent:make`, with the store at `store_url`."""
    import fleet_agent

    store = open_store(store_url)
    agent = fleet_agent.make(store=store)
    worker = create_worker(client, task_queue=task_queue, agent=agent, spec="fleet_agent:make", store=store)
    async with worker:
        yield
    await store.close()


def worker_process(target: str, task_queue: str, store_url: str, log: Path) -> subprocess.Popen[bytes]:
    """`eudaimon worker` in a process of its own, serving the fleet agent; output to `log`."""
    command = [sys.executable, "-m", "eudaimon", "worker", "--temporal", target, "--task-queue", task_queue]
    command += ["--agent", "fleet_agent:make", "--store", store_url]
    with open(log, "wb") as out:
        return subprocess.Popen(command, cwd=HERE, stdout=out, stderr=subprocess.STDOUT)
