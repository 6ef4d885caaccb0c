"""How late approval deadlines and durable waits fire on a Temporal fleet (`temporal._timers`).

`N` runs of `timed_fleet_agent` (tests/temporal) are started on one in-process worker against a
Temporal server: half ask a human with a deadline of `DEADLINE_S` nobody meets, half raise
`RetryAfter(DEADLINE_S)`. Lateness = when `approval_timed_out` / `tool_woke` was journaled minus
the deadline / wake time. Run (a dev server at HOST:PORT):
`python benchmarks/temporal_timer_lateness.py HOST:PORT [N]`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import uuid
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "temporal"))

import timed_fleet_agent
from temporalio.client import Client

from eudaimon.core.events import ApprovalRequested, ApprovalTimedOut, ToolWaiting, ToolWoke
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker

DEADLINE_S = 2.0


def _ms(later: datetime, due: datetime) -> float:
    return (later - due).total_seconds() * 1000.0


async def main(target: str, n: int) -> None:
    os.environ["TIMED_APPROVAL_S"] = os.environ["TIMED_WAIT_S"] = str(DEADLINE_S)
    client = await Client.connect(target)
    queue = f"lateness-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/journal.db"
        store = open_store(url)
        made = {name: getattr(timed_fleet_agent, name) for name in ("make_slowpay", "make_napper")}
        workers = [
            create_worker(
                client,
                task_queue=f"{queue}-{name}",
                agent=make(store=store),
                spec=f"timed_fleet_agent:{name}",
                store=store,
            )
            for name, make in made.items()
        ]
        async with workers[0], workers[1]:
            payer = timed_fleet_agent.make_slowpay(
                store=url, engine=TemporalEngine(target, task_queue=f"{queue}-make_slowpay")
            )
            napper = timed_fleet_agent.make_napper(
                store=url, engine=TemporalEngine(target, task_queue=f"{queue}-make_napper")
            )
            runs = await asyncio.gather(
                *(payer.prompt("pay ACME") for _ in range(n // 2)),
                *(napper.prompt("fetch q3") for _ in range(n - n // 2)),
            )
            await asyncio.gather(*(client.get_workflow_handle(r.run_id).result() for r in runs))
            deadlines, wakes = [], []
            for run in runs:
                events = await store.load(run.run_id)
                due = [e.data.deadline for e in events if isinstance(e.data, ApprovalRequested)]
                due += [e.data.wake_at for e in events if isinstance(e.data, ToolWaiting)]
                for e in events:
                    if isinstance(e.data, ApprovalTimedOut):
                        deadlines.append(_ms(e.at, due[0]))  # type: ignore[arg-type]
                    elif isinstance(e.data, ToolWoke):
                        wakes.append(_ms(e.at, due[0]))  # type: ignore[arg-type]
            for name, values in (("deadlines", deadlines), ("wakes", wakes)):
                q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
                print(f"{name}: n={len(values)} p50 {q[49]:.0f} ms, p99 {q[98]:.0f} ms, max {max(values):.0f} ms")
            await payer.aclose()
            await napper.aclose()
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40))
