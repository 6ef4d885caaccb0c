"""What an append costs on SQLite, CPU and wall time: every append also keeps the run index.

In this (fresh) process: 200 runs append 10 steps at once on one `SqliteStore`
(`synchronous=full`), a step being two appends of two events (an attempt and a model call asking
for a tool; the tool's start and result), then a final `run_completed`. Reported: process CPU
(all threads, the commit worker included) and wall time per append. Run with several `--src`
trees to set them side by side: the rounds alternate them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import _harness as h

ROUNDS = 3


async def appends(runs: int, steps: int, path: str) -> dict[str, float]:
    from datetime import UTC, datetime, timedelta

    from eudaimon.core.events import (
        Event,
        ModelAttemptStarted,
        ModelCalled,
        RunCompleted,
        RunStarted,
        ToolCompleted,
        ToolStarted,
    )
    from eudaimon.core.messages import Message, ToolCall, Usage
    from eudaimon.stores.sqlite import SqliteStore

    store = SqliteStore(path, synchronous="full")
    t0 = datetime.now(UTC)
    count = 0

    async def one(r: int) -> None:
        nonlocal count
        run, seq, at = f"run-{r}", 0, t0

        def ev(data: Any) -> Any:
            nonlocal seq, at
            at += timedelta(milliseconds=5)
            seq += 1
            return Event.of(run, seq - 1, at, data)

        start = RunStarted(agent="bench", input=f"input {r}", messages=(Message.user("hi"),), thread_id=f"t{r}")
        await store.append(run, 0, [ev(start)])
        for s in range(steps):
            call = ToolCall(f"c{s}", "lookup", {"k": s})
            asked = Message.assistant("", tool_calls=[call])
            batch = [
                ev(ModelAttemptStarted(step=s, request_id=f"q{s}", request_digest="")),
                ev(ModelCalled(step=s, request_id=f"q{s}", message=asked, usage=Usage(9, 9))),
            ]
            await store.append(run, batch[0].seq, batch)
            batch = [
                ev(ToolStarted(call_id=call.id, tool="lookup", idempotency_key="k")),
                ev(ToolCompleted(call_id=call.id, tool="lookup", output="ok")),
            ]
            await store.append(run, batch[0].seq, batch)
            count += 2
        await store.append(run, seq, [ev(RunCompleted(output="done"))])
        count += 2

    await store.list_runs(limit=1)
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(r) for r in range(runs)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await store.close()
    return {"CPU µs/append": cpu / count * 1e6, "wall µs/append": wall / count * 1e6}


def measure(quick: bool) -> dict[str, Any]:
    runs, steps = (50, 5) if quick else (200, 10)
    with h.scratch("append-") as tmp:
        return {
            f"{runs} runs × {steps} steps at once / {k}": v
            for k, v in h.run_on_thread(lambda: appends(runs, steps, str(tmp / "runs.db"))).items()
        }
