"""What every framework adapter returns, and small helpers shared by the harness."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Outcome:
    """A run's final output and how many tool calls it executed, read from the framework's own
    result object (its message history), never from the transcript."""

    final: str
    tool_calls: int
    extra: dict[str, Any] = field(default_factory=dict)


def vm_rss_kib() -> int:
    """VmRSS of this process from /proc/self/status, in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def vm_hwm_kib() -> int:
    """VmHWM (peak RSS) of this process, in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = await fn()
    return time.perf_counter() - start, value


def sqlite_bytes(*paths: str | os.PathLike[str]) -> dict[str, int]:
    """Bytes on disk of SQLite databases, measured the same way for every framework.

    Every writer must be closed first. A fresh connection runs `PRAGMA wal_checkpoint(TRUNCATE)`
    (the WAL is folded into the main file and truncated to 0 bytes; no VACUUM, so free pages
    stay counted), then `file` = main file + `-wal` (the `-shm` index is not data and is left
    out). `used` = (page_count - freelist_count) * page_size, the pages that hold data."""
    total_file = total_used = 0
    for path in paths:
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        finally:
            conn.close()
        wal = Path(f"{path}-wal")
        total_file += Path(path).stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        total_used += (pages - free) * page_size
    return {"file": total_file, "used": total_used}


class LoopLag:
    """A ticker task: sleeps 10 ms again and again and records how late it wakes up; samples
    VmRSS every 10th tick, keeping the peak."""

    def __init__(self, period_s: float = 0.010) -> None:
        self.period_s = period_s
        self.lags: list[float] = []
        self.peak_rss_kib = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._tick())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _tick(self) -> None:
        n = 0
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.period_s)
            self.lags.append(max(0.0, time.perf_counter() - start - self.period_s))
            n += 1
            if n % 10 == 0:
                self.peak_rss_kib = max(self.peak_rss_kib, vm_rss_kib())


class CpuWatch:
    """How much CPU *other* processes used while a workload ran: the machine is shared, so a
    figure taken while something else was busy is flagged rather than silently accepted.

    others = (busy jiffies of the whole machine from /proc/stat) − (this process and its waited-for
    children, from `os.times()`), as a share of the machine's capacity over the wall time."""

    def __init__(self) -> None:
        self._start = self._read()
        self._io_start = self._io_stall_s()

    @staticmethod
    def _io_stall_s() -> float | None:
        """Seconds in which some task stalled on I/O (Linux PSI), or None where PSI is absent."""
        try:
            with open("/proc/pressure/io") as f:
                first = f.readline().split()
        except OSError:
            return None
        total = next((p for p in first if p.startswith("total=")), None)
        return int(total.split("=", 1)[1]) / 1e6 if total else None

    @staticmethod
    def _read() -> tuple[float, float, float]:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
        busy = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        return time.monotonic(), busy, own

    def stop(self) -> dict[str, float]:
        t1, busy1, own1 = self._read()
        t0, busy0, own0 = self._start
        wall = max(t1 - t0, 1e-9)
        others = max(0.0, (busy1 - busy0) - (own1 - own0))
        cores = os.cpu_count() or 1
        io0, io1 = self._io_start, self._io_stall_s()
        io = (io1 - io0) / wall if io0 is not None and io1 is not None else -1.0
        return {"wall_s": wall, "others_core_s": others, "others_share": others / (wall * cores), "io_stall_share": io}
