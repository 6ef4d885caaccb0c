"""How late approval deadlines and durable waits fire on a Temporal fleet (`temporal._timers`).

`N` runs of `timed_fleet_agent` (tests/temporal) are started on one in-process worker against a
Temporal server: half ask a human with a deadline of `DEADLINE_S` nobody meets, half raise
`RetryAfter(DEADLINE_S)`. Lateness = when `approval_timed_out` / `tool_woke` was journaled minus
the deadline / wake time. Run (a dev server at HOST:PORT):
`python benchmarks/temporal_timer_lateness.py HOST:PORT [N]`.

`LATENESS_TIMER_S` sets the deadline and the wait (issue 35's target: a 10 ms timer, p99 late by
at most 20 ms, with 1,000 runs in flight: `LATENESS_TIMER_S=0.01 ... HOST:PORT 1000`). With
`LATENESS_CLI=1` the two workers are `eudaimon worker` processes instead of in-process workers.
With `LATENESS_HOLD_S=H` the asking half's deadline is H instead (say 600): those runs are started
first and stay open, waiting, while the napping half's timers are measured (only the wakes count).
H must outlast starting every run: `prompt()` started only ~2-3 runs/s on a loaded 2-core machine,
so with H=240 and N=2,000 the held runs had timed out before most wakes (the in-flight line shows it).
Beside each figure it prints how many runs were in flight (started, not yet ended, by the
journal's timestamps) when the timers were due, so "N in flight" is measured, not assumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "temporal"))

import timed_fleet_agent
from _fleet import worker_process
from temporalio.client import Client

from eudaimon.core.events import ApprovalRequested, ApprovalTimedOut, ToolWaiting, ToolWoke
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker

DEADLINE_S = float(os.environ.get("LATENESS_TIMER_S", "2.0"))


def _ms(later: datetime, due: datetime) -> float:
    return (later - due).total_seconds() * 1000.0


@contextlib.asynccontextmanager
async def cli_workers(target: str, queue: str, url: str, tmp: str) -> AsyncIterator[None]:
    """`eudaimon worker` for each agent, in processes of their own (the journal is `url`)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name in ("make_slowpay", "make_napper"):
            log = Path(tmp) / f"{name}.log"
            procs.append(worker_process(target, f"{queue}-{name}", url, log, spec=f"timed_fleet_agent:{name}"))
            deadline = time.monotonic() + 120
            while "worker for timed_fleet_agent" not in log.read_text():
                if procs[-1].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log.read_text())
                await asyncio.sleep(0.05)
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


def in_flight_at(due: list[datetime], spans: list[tuple[datetime, datetime]]) -> list[int]:
    """For each moment in `due`, how many runs had started and not yet ended then."""
    return [sum(start <= t < end for start, end in spans) for t in due]


async def main(target: str, n: int) -> None:
    os.environ["TIMED_APPROVAL_S"] = os.environ["TIMED_WAIT_S"] = str(DEADLINE_S)
    hold = os.environ.get("LATENESS_HOLD_S")
    if hold:
        os.environ["TIMED_APPROVAL_S"] = hold
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
        cli = os.environ.get("LATENESS_CLI") == "1"
        serving = cli_workers(target, queue, url, tmp) if cli else contextlib.AsyncExitStack()
        async with serving, contextlib.AsyncExitStack() as stack:
            if not cli:
                await stack.enter_async_context(workers[0])
                await stack.enter_async_context(workers[1])
            payer = timed_fleet_agent.make_slowpay(
                store=url, engine=TemporalEngine(target, task_queue=f"{queue}-make_slowpay")
            )
            napper = timed_fleet_agent.make_napper(
                store=url, engine=TemporalEngine(target, task_queue=f"{queue}-make_napper")
            )
            if hold:  # the asking half is open and waiting before the napping half starts
                asking = await asyncio.gather(*(payer.prompt("pay ACME") for _ in range(n // 2)))
                runs = asking + await asyncio.gather(*(napper.prompt("fetch q3") for _ in range(n - n // 2)))
            else:
                runs = await asyncio.gather(
                    *(payer.prompt("pay ACME") for _ in range(n // 2)),
                    *(napper.prompt("fetch q3") for _ in range(n - n // 2)),
                )
            await asyncio.gather(*(client.get_workflow_handle(r.run_id).result() for r in runs))
            deadlines, wakes = [], []
            spans: list[tuple[datetime, datetime]] = []
            dues: list[datetime] = []
            for i, run in enumerate(runs):
                events = await store.load(run.run_id)
                spans.append((events[0].at, events[-1].at))
                due = [e.data.deadline for e in events if isinstance(e.data, ApprovalRequested)]
                due += [e.data.wake_at for e in events if isinstance(e.data, ToolWaiting)]
                if not hold or i >= n // 2:  # held runs' long deadlines are not measured
                    dues += [d for d in due if d is not None]
                for e in events:
                    if isinstance(e.data, ApprovalTimedOut):
                        deadlines.append(_ms(e.at, due[0]))  # type: ignore[arg-type]
                    elif isinstance(e.data, ToolWoke):
                        wakes.append(_ms(e.at, due[0]))  # type: ignore[arg-type]
            for name, values in (("deadlines", deadlines), ("wakes", wakes)):
                q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
                print(f"{name}: n={len(values)} p50 {q[49]:.0f} ms, p99 {q[98]:.0f} ms, max {max(values):.0f} ms")
            both = sorted(wakes if hold else deadlines + wakes)
            q = statistics.quantiles(both, n=100, method="inclusive") if len(both) > 1 else both * 99
            flight = sorted(in_flight_at(dues, spans))
            print(
                f"all timers of {DEADLINE_S * 1000:.0f} ms ({'eudaimon worker' if cli else 'in-process'} workers):"
                f" n={len(both)} p50 {q[49]:.0f} ms, p99 {q[98]:.0f} ms, max {max(both):.0f} ms;"
                f" runs in flight when due: min {flight[0]}, median {flight[len(flight) // 2]}, max {flight[-1]}"
                f" of {n}; load average {os.getloadavg()}"
            )
            await payer.aclose()
            await napper.aclose()
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40))
