"""`eudaimon worker`: one worker of a fleet serving an agent's runs from a Temporal task queue.

This module imports neither temporalio nor the rest of `eudaimon.temporal` until the command
runs, so the CLI works without the `[temporal]` extra and says how to get it when asked.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from typing import Annotated, Any

import typer
from rich.text import Text

from eudaimon.cli._collector import freeze_start_up
from eudaimon.cli._common import (
    StoreOption,
    environ,
    fail,
    load_agent,
    make_default_directory,
    out,
    resolve_store_url,
    run_async,
    shown_url,
)
from eudaimon.core.errors import ConfigurationError, MissingExtra


def register(app: typer.Typer) -> None:
    """Add `worker` to the `eudaimon` command."""
    app.command("worker")(worker)


def worker(
    temporal: Annotated[
        str,
        typer.Option(
            "--temporal",
            help="The Temporal frontend, HOST:PORT. TLS, mTLS and an API key come from Temporal's client "
            "configuration (TEMPORAL_TLS_*, TEMPORAL_API_KEY, TEMPORAL_PROFILE), as for Temporal's own CLI.",
        ),
    ],
    task_queue: Annotated[str, typer.Option("--task-queue", help="The queue the agent's TemporalEngine uses.")],
    agent: Annotated[str, typer.Option("--agent", help="MODULE:ATTR naming the Agent (or a function returning one).")],
    store: StoreOption = None,
    namespace: Annotated[str, typer.Option("--namespace", help="The Temporal namespace.")] = "default",
    deps: Annotated[
        str | None,
        typer.Option(
            "--deps",
            help="MODULE:ATTR naming what this worker's tools get as ctx.deps (or a function returning it), "
            "for runs whose own deps cannot travel (a database pool). Required when the agent has a deps_type.",
        ),
    ] = None,
    sandboxed: Annotated[
        bool,
        typer.Option(
            "--sandboxed",
            help="Keep Temporal's full workflow sandbox: eudaimon and the agent's module are imported again "
            "for every run (about a second of CPU each). The same as --sandbox strict.",
        ),
    ] = False,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox",
            help="off (the default: workflows run unsandboxed, the cheapest), passthrough (Temporal's sandbox, "
            "eudaimon and the agent's module passed through) or strict (the same as --sandboxed).",
        ),
    ] = "off",
    workflow_task_slots: Annotated[
        int, typer.Option("--workflow-task-slots", min=1, help="Workflow tasks (decisions) run at once.")
    ] = 100,
    activity_slots: Annotated[
        int,
        typer.Option(
            "--activity-slots",
            min=1,
            help="Model calls, tool calls and journal appends run at once, and as many local activities "
            "(READ tool calls, appends no call carries) besides.",
        ),
    ] = 200,
    cached_workflows: Annotated[
        int,
        typer.Option(
            "--cached-workflows",
            min=1,
            help="Runs kept in memory between their tasks: keep it above the runs in flight on this worker, "
            "or an evicted run is replayed from its history on its next task.",
        ),
    ] = 2000,
) -> None:
    """Serve an agent's runs from a Temporal task queue, as one worker of a fleet.

    Start as many as you like, on as many machines, with the same agent module and the same
    `--store` (PostgreSQL for a fleet): each run is one workflow, its journal in the store.
    """
    try:
        from eudaimon.temporal._connect import connect
        from eudaimon.temporal._worker import create_worker
    except ImportError as exc:
        fail(str(MissingExtra("`eudaimon worker`", "temporal", exc.name)))
    url = resolve_store_url(store)
    make_default_directory(url)
    with environ("EUDAIMON_STORE", url):
        built = load_agent(agent)
        worker_deps = _load_deps(deps) if deps is not None else None
    console = out()

    async def serve() -> None:
        try:
            client = await connect(temporal, namespace)
        except ConfigurationError as exc:
            fail(str(exc))
        except Exception as exc:
            fail(f"cannot reach Temporal at {temporal} (namespace {namespace}): {exc}")
        try:
            running = create_worker(
                client,
                task_queue=task_queue,
                agent=built,
                spec=agent,
                store=built.store,
                deps=worker_deps,
                sandboxed=sandboxed,
                sandbox=sandbox,  # type: ignore[arg-type]  # create_worker refuses an unknown mode
                max_concurrent_workflow_tasks=workflow_task_slots,
                max_concurrent_activities=activity_slots,
                max_cached_workflows=cached_workflows,
            )
        except ConfigurationError as exc:
            fail(str(exc))
        console.print(
            Text(f"worker for {agent} on {temporal}/{task_queue} (namespace {namespace}), journal {shown_url(url)}")
        )
        sys.stdout.flush()
        freeze_start_up()  # connected, the agent and the worker built: no full collection walks them again
        checking = asyncio.ensure_future(_check_at_start(client, built))
        try:
            await running.run()
        except asyncio.CancelledError:
            await running.shutdown()
        finally:
            checking.cancel()
            await built.store.close()

    try:
        run_async(serve())
    except KeyboardInterrupt:
        console.print("worker stopped")


async def _check_at_start(client: Any, agent: Any) -> None:
    """Journal as failed the runs of this agent whose workflow Temporal gave up on while no
    worker looked (`eudaimon.temporal._gave_up`): the journal must not say `running`, or that
    the run waits for a person, for good. One visibility query, however many runs wait."""
    from eudaimon.temporal._engine import WORKFLOW
    from eudaimon.temporal._gave_up import record_closed

    try:
        found = await record_closed(client, WORKFLOW, agent.store, {agent.name}, None)
    except Exception as exc:  # a check that fails leaves the runs as they were; the worker serves on
        out().print(Text(f"could not check the runs Temporal may have given up on: {exc}"))
        return
    if found:
        out().print(Text(f"journaled {len(found)} run(s) whose workflow had closed as failed: {', '.join(found[:10])}"))


def _load_deps(target: str) -> Any:
    """The value `MODULE:ATTR` names, or what it returns when it is a function of no arguments."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        fail(f"--deps {target!r} is not MODULE:ATTR; write e.g. --deps myapp.workers:deps")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        fail(f"--deps {target}: {exc}")
    if inspect.isfunction(found):
        found = found()
    return found
