"""Cooperative cancellation of a run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class CancellationToken:
    """Set it from anywhere, any thread included, to stop a run at its next check.

    The loop checks it before each iteration and while tools run; a cancelled run ends with
    `run_cancelled` in its journal and `prompt` raises `Cancelled`.
    """

    def __init__(self) -> None:
        self._reason: str | None = None
        self._by: str | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._callbacks: list[tuple[asyncio.AbstractEventLoop, Callable[[], object]]] = []

    def cancel(self, reason: str = "cancelled by the caller", *, by: str | None = None) -> None:
        """Stop the run at its next check; `by` names who cancelled in its `run_cancelled` event."""
        if self._reason is not None:
            return
        self._by = by
        self._reason = reason
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for loop, waiter in list(self._waiters):
            if loop is current:
                waiter.set()  # on its own loop: no thread hop (a workflow's loop has none)
            else:
                loop.call_soon_threadsafe(waiter.set)
        for loop, callback in list(self._callbacks):
            if loop is current:
                loop.call_soon(callback)
            else:
                loop.call_soon_threadsafe(callback)

    @property
    def is_cancelled(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str:
        return self._reason or ""

    @property
    def by(self) -> str | None:
        return self._by

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Have `callback` called soon on the running loop when the token is cancelled (soon,
        if it is already), never inside `cancel` itself; returns what unregisters it. A cancel
        racing in from another thread may call it twice: it must not mind."""
        entry = (asyncio.get_running_loop(), callback)
        if self._reason is not None:
            entry[0].call_soon(callback)
            return _nothing
        self._callbacks.append(entry)
        if self._reason is not None:  # cancelled meanwhile, maybe before it saw the entry
            entry[0].call_soon(callback)

        def remove() -> None:
            if entry in self._callbacks:
                self._callbacks.remove(entry)

        return remove

    async def wait(self) -> str:
        """Return the reason once cancelled."""
        if self._reason is None:
            entry = (asyncio.get_running_loop(), asyncio.Event())
            self._waiters.append(entry)
            try:
                if self._reason is None:
                    await entry[1].wait()
            finally:
                self._waiters.remove(entry)
        return self.reason

    def __repr__(self) -> str:
        return f"CancellationToken(cancelled={self.is_cancelled})"


def _nothing() -> None:
    pass
