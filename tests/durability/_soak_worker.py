"""One incarnation of the soak: a fresh process that starts or resumes some runs, in parallel.

Usage: python _soak_worker.py STORE_SPEC LEDGER_DIR INCARNATION SEED RUN_ID[,RUN_ID…]

It prints `ready` once the store is open, then drives every run at once: a run without
events is started with `prompt(run_id=…)`, any other is `resume`d (which waits for a killed
predecessor's lease to lapse). While working it prints `M <run>` when a model call begins
(after `model_attempt_started` is committed) and `T <run> <call> <attempt>` when a tool has
written its ledger line and is about to sleep before returning: the parent SIGKILLs on those
lines to land kills inside model calls and between `tool_started` and `tool_completed`.
At the end it prints `done {run: status}`. A journal error (a lapsed lease under load, a lost
append race) prints `E <run> <kind> <message>` and ends the process at once, like a crash.
With `EUDAIMON_SOAK_MUTANT=write-is-idempotent` the agent wrongly declares `write` idempotent:
the soak's self-test, whose audit must catch the WRITE run twice.
With `EUDAIMON_SOAK_STOP=POINT:K` the process stops itself (SIGSTOP, after printing `Z POINT PID`)
the K-th time it reaches POINT (`_stall_points`): `intent` (a WRITE/IRREVERSIBLE intent just
committed), `hook` (inside `on_tool_call` of such a call), `tool` (inside any tool, after its
ledger line) or `model` (inside a model call); the parent sends SIGCONT later.
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import os
import random
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from _proc_support import (
    LedgerWriter,
    Timing,
    build_agent,
    build_tools,
    open_store,
    plan_model,
    stdout_emit,
)
from _stall_points import Countdown, StopAfterIntent, StopInHook

from eudaimon import Agent
from eudaimon.core.errors import JournalError, RunNotFound

# A worker the parent finds hung is sent SIGUSR1 first: its stacks then explain the hang.
faulthandler.register(signal.SIGUSR1, all_threads=True)


async def drive(agent: Agent, run_id: str) -> str:
    try:
        try:
            await agent.state(run_id)
        except RunNotFound:
            response = await agent.prompt(f"soak {run_id}", run_id=run_id)
        else:
            response = await agent.resume(run_id)
    except JournalError as exc:
        stdout_emit("E", run_id, type(exc).__name__, str(exc).replace("\n", " "))
        os._exit(3)
    except BaseException as exc:
        stdout_emit("X", run_id, type(exc).__name__, str(exc).replace("\n", " "))
        os._exit(4)
    return str(response.status)


async def main() -> None:
    spec, ledger_dir, incarnation, seed, runs = sys.argv[1:6]
    rng = random.Random(int(seed))
    point, _, nth = os.environ.get("EUDAIMON_SOAK_STOP", "").partition(":")
    # Where a process may stop itself, no tool may be between the lease check and its ledger
    # line (that window is what fencing tokens cover): no delay before the ledger line.
    timing = Timing(before_ledger=(0.0, 0.0)) if point else Timing()
    store: Any = open_store(spec)
    if point == "intent":
        store = StopAfterIntent(store, int(nth))
    ledger = LedgerWriter(Path(ledger_dir), incarnation)
    after_ledger = Countdown("tool", int(nth)) if point == "tool" else None
    tools = build_tools(ledger, rng, timing, stdout_emit, after_ledger=after_ledger)
    if os.environ.get("EUDAIMON_SOAK_MUTANT") == "write-is-idempotent":
        # A deliberately wrong agent, to prove the audit catches a WRITE run twice.
        tools = [replace(t, idempotent=True) if t.name == "write" else t for t in tools]
    on_call = Countdown("model", int(nth)) if point == "model" else None
    hooks = [StopInHook(int(nth))] if point == "hook" else None
    model = plan_model(rng, timing, stdout_emit, on_call=on_call)
    agent = build_agent(store, tools, model, allow_irreversible=True, hooks=hooks)
    await store.list_runs(limit=1)  # the store is open (schema ready) before we say so
    stdout_emit("ready")
    run_ids = runs.split(",")
    statuses = await asyncio.gather(*(drive(agent, run_id) for run_id in run_ids))
    await store.close()
    stdout_emit("done", json.dumps(dict(zip(run_ids, statuses, strict=True))))


if __name__ == "__main__":
    asyncio.run(main())
