"""`eudaimon worker`: one worker of a fleet serving an agent's runs from a Temporal task queue.

This module imports neither temporalio nor the rest of `eudaimon.temporal` until the command
runs, so the CLI works without the `[temporal]` extra and says how to get it when asked.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer
from rich.text import Text

from eudaimon.cli._common import StoreOption, environ, fail, load_agent, out, resolve_store_url, run_async, shown_url
from eudaimon.core.errors import MissingExtra


def register(app: typer.Typer) -> None:
    """Add `worker` to the `eudaimon` command."""
    app.command("worker")(worker)


def worker(
    temporal: Annotated[str, typer.Option("--temporal", help="The Temporal frontend, HOST:PORT.")],
    task_queue: Annotated[str, typer.Option("--task-queue", help="The queue the agent's TemporalEngine uses.")],
    agent: Annotated[str, typer.Option("--agent", help="MODULE:ATTR naming the Agent (or a function returning one).")],
    store: StoreOption = None,
    namespace: Annotated[str, typer.Option("--namespace", help="The Temporal namespace.")] = "default",
) -> None:
    """Serve an agent's runs from a Temporal task queue, as one worker of a fleet.

    Start as many as you like, on as many machines, with the same agent module and the same
    `--store` (PostgreSQL for a fleet): each run is one workflow, its journal in the store.
    """
    try:
        from temporalio.client import Client

        from eudaimon.temporal._worker import create_worker
    except ImportError as exc:
        fail(str(MissingExtra("`eudaimon worker`", "temporal", exc.name)))
    url = resolve_store_url(store)
    with environ("EUDAIMON_STORE", url):
        built = load_agent(agent)
    console = out()

    async def serve() -> None:
        try:
            client = await Client.connect(temporal, namespace=namespace)
        except Exception as exc:
            fail(f"cannot reach Temporal at {temporal} (namespace {namespace}): {exc}")
        running = create_worker(client, task_queue=task_queue, agent=built, spec=agent, store=built.store)
        console.print(
            Text(f"worker for {agent} on {temporal}/{task_queue} (namespace {namespace}), journal {shown_url(url)}")
        )
        sys.stdout.flush()
        try:
            await running.run()
        except asyncio.CancelledError:
            await running.shutdown()
        finally:
            await built.store.close()

    try:
        run_async(serve())
    except KeyboardInterrupt:
        console.print("worker stopped")
