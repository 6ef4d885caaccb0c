"""Replay recorded workflow histories with Temporal's `Replayer`, printing a line per history:
`REPLAYED {"path": …, "failure": null}` when today's code makes the recorded decisions, the
failure's text when it does not (the mark, because Temporal's core logs to stdout too).

    cd tests/temporal && python replay_histories.py FILE.json…

The replay test runs this in a fresh interpreter rather than in a pytest worker that has run
other tests: the replayer waits on its core with no timeout ("we cannot add timeout just in case
debug mode is enabled", temporalio 1.35), and once in a full suite a replay never returned.
A replay that has not ended after `HUNG_S` prints `"hung": true` and ends this process (exit 3),
so that its caller can run what is left in a fresh one.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from eudaimon.temporal import RunWorkflow, sandbox_restrictions
from eudaimon.temporal._served import serve

HUNG_S = 60.0
HUNG_EXIT = 3
MARK = "REPLAYED "


def replayer() -> Replayer:
    """The strict sandbox, eudaimon imported inside it: a clock, randomness or I/O in the
    workflow's code fails the replay."""
    serve("fleet", "fleet_agent:make")
    serve("slowpay", "timed_fleet_agent:make_slowpay")
    serve("napper", "timed_fleet_agent:make_napper")
    serve("parent", "fleet_agent:make_parent")
    return Replayer(
        workflows=[RunWorkflow],
        workflow_runner=SandboxedWorkflowRunner(restrictions=sandbox_restrictions("fleet_agent")),
    )


async def _failure(path: Path) -> str | None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    try:
        result = await replayer().replay_workflow(history, raise_on_replay_failure=False)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    failure = result.replay_failure
    return None if failure is None else f"{type(failure).__name__}: {failure}"


async def main(paths: list[Path]) -> None:
    for path in paths:
        replay = asyncio.ensure_future(_failure(path))
        done, _ = await asyncio.wait({replay}, timeout=HUNG_S)
        if not done:
            print(MARK + json.dumps({"path": str(path), "hung": True}), flush=True)
            os._exit(HUNG_EXIT)  # the stuck replayer would hold the interpreter's exit too
        print(MARK + json.dumps({"path": str(path), "failure": replay.result()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main([Path(arg).resolve() for arg in sys.argv[1:]]))
