"""Helpers for the fleet tests: workers in this process and in processes of their own."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from temporalio.client import Client

from eudaimon.stores.url import open_store
from eudaimon.temporal import create_worker

HERE = Path(__file__).parent


@contextlib.asynccontextmanager
async def in_process_worker(
    client: Client, task_queue: str, store_url: str, *, spec: str = "fleet_agent:make", deps: Any = None
) -> AsyncIterator[None]:
    """A worker in this process serving `spec` (`fleet_agent:make`), with the store at `store_url`."""
    module, _, attr = spec.partition(":")
    store = open_store(store_url)
    agent = getattr(importlib.import_module(module), attr)(store=store)
    worker = create_worker(client, task_queue=task_queue, agent=agent, spec=spec, store=store, deps=deps)
    async with worker:
        yield
        await until_no_task_is_due(client, task_queue)
    await store.close()


async def until_no_task_is_due(client: Client, task_queue: str, within_s: float = 15.0) -> None:
    """Until no open workflow on `task_queue` has a workflow task due: a run's workflow goes on
    for a moment after its caller returned (it deletes the run's stash, then completes), and a
    worker shut down with that task on its sticky queue never finished its shutdown (the test
    hung in Temporal's `Worker.shutdown`). Workflows waiting for a person have none."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    query = f"TaskQueue = '{task_queue}' AND ExecutionStatus = 'Running'"
    while loop.time() < deadline:
        due = [
            listed.id
            async for listed in client.list_workflows(query)
            if (await client.get_workflow_handle(listed.id, run_id=listed.run_id).describe()).raw_description.HasField(
                "pending_workflow_task"
            )
        ]
        if not due:
            return
        await asyncio.sleep(0.05)


def worker_process(
    target: str,
    task_queue: str,
    store_url: str,
    log: Path,
    *,
    spec: str = "fleet_agent:make",
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """`eudaimon worker` in a process of its own, serving `spec`; output to `log`."""
    command = [sys.executable, "-m", "eudaimon", "worker", "--temporal", target, "--task-queue", task_queue]
    command += ["--agent", spec, "--store", store_url, *extra]
    with open(log, "wb") as out:
        return subprocess.Popen(command, cwd=HERE, stdout=out, stderr=subprocess.STDOUT)


@contextlib.contextmanager
def running_workers(
    count: int, target: str, task_queue: str, store_url: str, logs_in: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` `eudaimon worker` processes serving `fleet_agent:make`, each answering before the
    block starts; stopped with SIGINT after it (killed if one does not stop in 30 s)."""
    logs = [logs_in / f"worker-{i}.log" for i in range(count)]
    workers = [worker_process(target, task_queue, store_url, log) for log in logs]
    try:
        for proc, log in zip(workers, logs, strict=True):
            deadline = time.monotonic() + 120
            while "worker for fleet_agent:make" not in log.read_text():
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield workers
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in workers:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def latest_input(client: Client, run_id: str) -> dict[str, Any]:
    """The input (`RunInput`, as JSON) of the run's workflow's latest execution."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    found: dict[str, Any] = json.loads(started.input.payloads[0].data)
    return found


async def activity_results(client: Client, run_id: str, name: str) -> list[Any]:
    """What the latest execution's activities of type `name` returned, decoded from JSON."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    scheduled = {
        e.event_id: e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    }
    results = []
    for event in history.events:
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            if scheduled.get(done.scheduled_event_id) == name and done.result.payloads:
                results.append(json.loads(done.result.payloads[0].data))
    return results
