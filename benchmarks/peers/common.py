"""What every framework adapter returns, and small helpers shared by the harness."""

from __future__ import annotations

import asyncio
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
        try:
            await self._task
        except asyncio.CancelledError:
            pass

    async def _tick(self) -> None:
        n = 0
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.period_s)
            self.lags.append(max(0.0, time.perf_counter() - start - self.period_s))
            n += 1
            if n % 10 == 0:
                self.peak_rss_kib = max(self.peak_rss_kib, vm_rss_kib())
