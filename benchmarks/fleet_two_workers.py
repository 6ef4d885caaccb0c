"""Many runs started at once through two `eudaimon worker` processes on one queue and one journal.

Issue 35's target: 5,000 runs started at once through two workers all complete, each once, none
left `running` in the journal. Each run is the fleet workload (`peers/fleet_loop.py`: the model
called twice, 50 ms each, and one READ tool between). One Temporal dev server; two
`eudaimon worker --agent peers.fleet_loop:make` processes (the CLI a user runs) on one task queue,
journaling to one store (SQLite on this repository's disk unless `FLEET2_STORE` names another URL,
say a PostgreSQL database); N runs started at once from this process through `TemporalEngine`
(`agent.prompt`, each waiting for its answer).

Figures: runs completed (answered "looked it up" within the time allowed), wall seconds from the
first start to the last answer, runs/s, each worker's CPU seconds and peak RSS, the Temporal
server's CPU seconds; then, from the journal: runs whose `run_completed` is there exactly once, runs
with more than one, and runs whose journal does not end in a terminal event (stuck `running`).

Sizes: N = 20 (quick), 200 (full); `FLEET2_SIZES=5000` for the issue's target (heavy: run it
under `flock /work/team/heavy.lock`). `FLEET2_ALLOWED_S` bounds the wait (default 120 s + 0.5 s a run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import _harness as h
from fleet import cpu_s, peak_rss_mb, run_eudaimon
from temporal_step import start_server

WORKERS = 2


def start_workers(target: str, queue: str, store_url: str, logs_in: Path) -> list[subprocess.Popen[bytes]]:
    """Two `eudaimon worker` processes serving `peers.fleet_loop:make`, each ready before it returns."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(h.SRC), str(h.HERE)])}
    command = [sys.executable, "-m", "eudaimon", "worker", "--temporal", target, "--task-queue", queue]
    command += ["--agent", "peers.fleet_loop:make", "--store", store_url]
    command += os.environ.get("FLEET2_WORKER_ARGS", "").split()
    workers, logs = [], []
    for i in range(WORKERS):
        log = logs_in / f"{queue}-worker-{i}.log"
        with open(log, "wb") as out:
            workers.append(subprocess.Popen(command, cwd=h.HERE, stdout=out, stderr=subprocess.STDOUT, env=env))
        logs.append(log)
    for worker, log in zip(workers, logs, strict=True):
        deadline = time.monotonic() + 120
        while b"worker for peers.fleet_loop:make" not in log.read_bytes():
            if worker.poll() is not None or time.monotonic() > deadline:
                for w in workers:
                    h.stop(w, 10)
                raise RuntimeError(f"a worker did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
    time.sleep(1.0)  # polling
    return workers


async def journal_figures(store_url: str, ids: list[str]) -> dict[str, float]:
    """What the journal says of the runs: completed once, more than once, not ended (stuck)."""
    from eudaimon.core.events import TERMINAL_TYPES
    from eudaimon.stores.url import open_store

    store = open_store(store_url)
    once = twice = unended = 0
    for run_id in ids:
        types = [e.type for e in await store.load(run_id)]
        completed = types.count("run_completed")
        once += completed == 1
        twice += completed > 1
        unended += not types or types[-1] not in TERMINAL_TYPES
    summaries = await store.list_runs(limit=len(ids) + 100)
    await store.close()
    return {
        "journal: completed once": float(once),
        "journal: completed more than once": float(twice),
        "journal: not ended (stuck running)": float(unended),
        "journal: runs": float(len(summaries)),
    }


def one_size(target: str, server_pid: int, n: int, tmp: Path) -> dict[str, float]:
    queue = f"fleet2-{uuid.uuid4().hex[:6]}"
    store_url = os.environ.get("FLEET2_STORE") or f"sqlite:///{tmp / f'{queue}.db'}"
    allowed_s = float(os.environ.get("FLEET2_ALLOWED_S", 120.0 + 0.5 * n))
    workers = start_workers(target, queue, store_url, tmp)
    try:
        cpu0 = [cpu_s(w.pid) for w in workers]
        server0 = cpu_s(server_pid)
        done, wall, ids = h.run_on_thread(lambda: run_eudaimon(target, queue, store_url, n, allowed_s))
        figures: dict[str, float] = {"completed": float(done), "wall s": wall, "runs/s": done / wall}
        for i, (worker, before) in enumerate(zip(workers, cpu0, strict=True)):
            alive = worker.poll() is None
            figures[f"worker {i} CPU s"] = cpu_s(worker.pid) - before if alive else float("nan")
            figures[f"worker {i} peak RSS MB"] = peak_rss_mb(worker.pid) if alive else float("nan")
        figures["server CPU s"] = cpu_s(server_pid) - server0
        figures["load average (1 min) at the end"] = os.getloadavg()[0]
    finally:
        for worker in workers:
            h.stop(worker, 30)
    figures |= h.run_on_thread(lambda: journal_figures(store_url, ids))
    return figures


def measure(quick: bool) -> dict[str, Any]:
    h.requires("temporalio")
    sizes = [int(s) for s in os.environ.get("FLEET2_SIZES", "20" if quick else "200").split(",")]
    server, target = start_server()
    figures: dict[str, Any] = {}
    try:
        with h.scratch("fleet2-") as tmp:
            for n in sizes:
                h.say(f"two workers, N={n}")
                figures[f"N={n}"] = one_size(target, server.pid, n, tmp)
                h.say(f"  {figures[f'N={n}']}")
    finally:
        h.stop(server, 30)
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    """Per N measured: every run answered, each completed once in the journal, none left running."""
    out = []
    for n in sorted({int(k.split(" / ")[0].removeprefix("N=")) for k in f if k.startswith("N=")}):
        at = f"N={n} / "
        out.append(
            h.Target(f"N={n}, two workers: every run completes (runs not completed)", n - f[at + "completed"], 0, "")
        )
        once = f[at + "journal: completed once"]
        out.append(h.Target(f"N={n}, two workers: each run completed once in the journal (runs not)", n - once, 0, ""))
        stuck = f[at + "journal: not ended (stuck running)"]
        out.append(h.Target(f"N={n}, two workers: none left running in the journal", stuck, 0, ""))
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(measure("--quick" in sys.argv), indent=1))
