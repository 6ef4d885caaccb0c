"""Where a worker process stops itself (SIGSTOP) for the stalled-process attacks.

A stop the process sends itself lands at an exact point, which a signal from the parent
cannot: the parent only learns of a moment after it has passed. Before stopping, the worker
prints `Z <point>` so the parent knows; it runs on when the parent sends SIGCONT.

- `hook`: inside `on_tool_call` for a call of a tool that may not run twice, before its intent;
- `intent`: right after the store committed a batch holding the `tool_started` intent of such
  a call — just before the driver invokes the tool;
- `tool:K`, `model:K`: used by the soak (see `_soak_worker.py`).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from typing import Any

from _proc_support import stdout_emit

from eudaimon import ToolCall
from eudaimon.core.events import Event, ToolStarted
from eudaimon.extensions.hooks import AgentHook
from eudaimon.stores import EventStore
from eudaimon.stores.base import Snapshot

ONCE_ONLY = frozenset({"write", "send"})
"""The tools (of `_proc_support.build_tools`) that may not run twice."""


def stop_here(point: str) -> None:
    """Say where, then stop this whole process until SIGCONT."""
    stdout_emit("Z", point, os.getpid())
    os.kill(os.getpid(), signal.SIGSTOP)


class StopInHook(AgentHook):
    """Stops the process inside `on_tool_call` of the `nth` WRITE/IRREVERSIBLE call it sees."""

    def __init__(self, nth: int = 1) -> None:
        self.left = nth

    def on_tool_call(self, call: ToolCall) -> None:
        if call.name in ONCE_ONLY:
            self.left -= 1
            if self.left == 0:
                stop_here("hook")


class StopAfterIntent:
    """An `EventStore` that, once it has committed the `nth` batch holding the intent of a
    WRITE/IRREVERSIBLE call, stops the process before returning to the driver."""

    def __init__(self, store: EventStore, nth: int = 1) -> None:
        self._store = store
        self.left = nth

    async def append(
        self, run_id: str, expected_seq: int, events: Sequence[Event], snapshot: Snapshot | None = None
    ) -> None:
        await self._store.append(run_id, expected_seq, events, snapshot)
        if any(isinstance(e.data, ToolStarted) and e.data.tool in ONCE_ONLY for e in events):
            self.left -= 1
            if self.left == 0:
                stop_here("intent")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class Countdown:
    """Stops the process the `nth` time it is called (for the soak's `tool` and `model` points)."""

    def __init__(self, point: str, nth: int) -> None:
        self.point = point
        self.left = nth

    def __call__(self, *_: object) -> None:
        self.left -= 1
        if self.left == 0:
            stop_here(self.point)


def is_stopped(pid: int) -> bool:
    """Whether the process is stopped by a signal (state `T` in /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except FileNotFoundError:
        return False
