"""The plumbing every workload shares: threads, subprocesses, clocks, percentiles, the disk's commit.

A workload module measures one thing and exposes `measure(quick: bool) -> dict[str, float]`
(its figures, one round, on the eudaimon that `PYTHONPATH` puts first) and `targets(figures)`
(its verdicts, from the medians). `run.py` calls it in a fresh subprocess per tree and round;
everything a workload needs beyond its own measuring lives here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCRATCH = HERE / "out"
"""Where database files go: the repository's disk (not a tmpfs), gitignored."""
SRC = Path(os.environ.get("BENCH_SRC", REPO / "src"))
"""The source tree under measurement (`run.py --src NAME=PATH` sets it per child)."""

T = TypeVar("T")


class Skip(Exception):
    """Raised by a workload that cannot run here (a missing package or service); the message says what to do."""


def requires(*modules: str) -> None:
    """Skip the workload unless every module in `modules` can be imported."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise Skip(f"needs {', '.join(missing)} (benchmarks/setup.sh installs them in benchmarks/.peers)")


def say(message: str) -> None:
    """Progress, on stderr: a workload's stdout carries its result."""
    print(f"    {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class Target:
    """One verdict: `value` (a ratio or a time) against `limit`, met when value ≤ limit."""

    name: str
    value: float
    limit: float
    how: str
    """What the value is, in words: the figures it was taken from."""

    @property
    def met(self) -> bool:
        return self.value <= self.limit


# -- threads ---------------------------------------------------------------------------------


def on_thread(work: Callable[[], T]) -> T:
    """Run `work` on a fresh OS thread: no measured run inherits another's loop or thread state."""
    box: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # re-raised on the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return box[0]


def run_on_thread(make: Callable[[], Awaitable[T]]) -> T:
    """`asyncio.run(make())` on a fresh thread, so on a fresh event loop."""
    return on_thread(lambda: asyncio.run(make()))  # type: ignore[arg-type]


def timed_on_thread(make: Callable[[], Awaitable[T]], *, collect: bool = True) -> tuple[float, T]:
    """Seconds one awaited run took on a thread of its own, `gc.collect()` first (outside the timing),
    so that no run pays for the garbage of the one before."""

    async def go() -> tuple[float, T]:
        awaitable = make()
        if collect:
            gc.collect()
        start = time.perf_counter()
        value = await awaitable
        return time.perf_counter() - start, value

    return run_on_thread(go)


def rotate(items: Sequence[T], by: int) -> list[T]:
    """`items` starting at `by` (mod its length): alternation, so no configuration always goes first."""
    k = by % len(items) if items else 0
    return [*items[k:], *items[:k]]


# -- statistics ------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-quantile (0..1) by nearest rank, nan for no values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- subprocesses ----------------------------------------------------------------------------


def in_subprocess(function: str, *args: Any, timeout_s: float = 900.0) -> Any:
    """Call `module:function(*args)` (a module of benchmarks/) in a fresh interpreter of the same
    tree; its JSON result comes back on the last line of stdout."""
    cmd = [sys.executable, str(Path(__file__)), function, json.dumps(args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=HERE)
    if proc.returncode != 0:
        tail = " / ".join((proc.stderr or proc.stdout).strip().splitlines()[-4:])
        raise RuntimeError(f"{function}{tuple(args)} failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tree_env(src: Path) -> dict[str, str]:
    """The environment of a child that imports eudaimon from `src`, and says so in `BENCH_SRC`."""
    path = os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, "BENCH_SRC": str(src)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(process: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    """End a server the workload started: asked first, killed if it does not go in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A fresh directory under benchmarks/out, removed afterwards."""
    SCRATCH.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=SCRATCH) as tmp:
        yield Path(tmp)


# -- the disk and the loop -------------------------------------------------------------------


def commit_us(path: Path, n: int = 60) -> float:
    """Median µs of one durable commit of a small row by a bare `sqlite3` connection (WAL,
    `synchronous=FULL`, an fsync each): the unit a durable step is judged against."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        times: list[float] = []
        for i in range(n):
            start = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t (v) VALUES (?)", (f"row {i} " + "x" * 64,))
            conn.execute("COMMIT")
            times.append(time.perf_counter() - start)
        return median(times) * 1e6
    finally:
        conn.close()


class FullCollections:
    """When each generation-2 garbage collection ran (the loop's clock), and the CPU all collections took."""

    def __init__(self) -> None:
        self.cpu_s = 0.0
        self.spans: list[tuple[float, float]] = []
        self._began = (0.0, 0.0)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = (time.thread_time(), time.monotonic())
            return
        self.cpu_s += time.thread_time() - self._began[0]
        if info["generation"] == 2:
            self.spans.append((self._began[1], time.monotonic()))

    def overlaps(self, start: float, end: float) -> bool:
        return any(began < end and ended > start for began, ended in self.spans)


class Ticker:
    """A 10 ms timer on the running loop: how late each tick fires (what a server's timers feel)."""

    PERIOD_S = 0.010

    def __init__(self) -> None:
        self.late_s: list[float] = []
        self.windows: list[tuple[float, float]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.PERIOD_S
            await asyncio.sleep(self.PERIOD_S)
            fired = loop.time()
            self.late_s.append(max(0.0, fired - due))
            self.windows.append((due, fired))

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def p99_ms(self, without: FullCollections | None = None) -> float:
        """p99 lateness; with `without`, of the ticks no full collection overlapped."""
        late = [
            s
            for s, (due, fired) in zip(self.late_s, self.windows, strict=True)
            if without is None or not without.overlaps(due, fired)
        ]
        return percentile(late, 0.99) * 1e3


# -- eudaimon's scripted tool loop -----------------------------------------------------------


def loop_agent(k: int, *, store: Any = None, effect: str = "read", **options: Any) -> Any:
    """An agent whose run is K steps: K-1 model turns that each call one async tool `echo(i)`
    (of `effect`), then an answer, played by a zero-latency `ScriptedModel`."""
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.models import ScriptedModel

    @tool(effect=effect)
    async def echo(i: int) -> int:
        """Return `i`.

        Args:
            i: Any integer.
        """
        return i

    script: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", "echo", {"i": i})]) for i in range(k - 1)
    ]
    return Agent(ScriptedModel([*script, "done"]), tools=[echo], store=store, max_iterations=k + 1, **options)


def checked(response: Any, k: int) -> Any:
    """`response` if its run completed after exactly K steps and K-1 tool results: the work is
    checked before a figure is kept."""
    tools = sum(1 for m in response.messages if m.role.value == "tool")
    if response.status != "completed" or response.iterations != k or tools != k - 1:
        raise RuntimeError(f"run ended {response.status} after {response.iterations} steps and {tools} tool calls")
    return response


if __name__ == "__main__":  # in_subprocess's child: MODULE:FUNCTION JSON_ARGS
    sys.path.insert(0, str(HERE))
    module_name, function_name = sys.argv[1].split(":")
    module = __import__(module_name)
    result = getattr(module, function_name)(*json.loads(sys.argv[2]))
    print(json.dumps(result))
