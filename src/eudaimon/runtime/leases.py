"""Run and thread leases: one process drives a run at a time, and a stalled one stops.

A driver takes the lease before its first effect and renews it in the background. If a
renewal fails for longer than the lease lasts, the driver's own deadline passes and the
journal refuses its next commit, so the process stops before its next effect; meanwhile
another process may take the lapsed lease over. A crashed process's lease simply expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import socket
import time

from eudaimon.core.errors import LeaseHeld, LeaseLost
from eudaimon.stores.base import EventStore

DEFAULT_TTL_S = 30.0


def lease_ttl_s() -> float:
    """`EUDAIMON_LEASE_TTL_S`, else 30 seconds."""
    return float(os.environ.get("EUDAIMON_LEASE_TTL_S", DEFAULT_TTL_S))


_PROCESS: str | None = None
_DRIVERS = itertools.count()


def _forget_process() -> None:
    global _PROCESS
    _PROCESS = None  # a forked child is another owner


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_forget_process)


def new_owner() -> str:
    """Names this driver in lease tables: host, pid and a nonce drawn once per process (a later
    process with the same pid differs), then a counter (two drivers in one process differ)."""
    global _PROCESS
    if _PROCESS is None:
        _PROCESS = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    return f"{_PROCESS}.{next(_DRIVERS)}"


class LeaseKeeper:
    def __init__(self, store: EventStore, name: str, *, ttl_s: float | None = None) -> None:
        self.store = store
        self.name = name
        self.owner = new_owner()
        self.ttl_s = ttl_s if ttl_s is not None else lease_ttl_s()
        self._deadline = 0.0
        self._renewer: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def acquire(self, *, wait: bool = True) -> None:
        """Take the lease; while another live holder has it, wait for it to lapse (or raise)."""
        while True:
            started = time.monotonic()
            try:
                lease = await self.store.acquire_lease(self.name, self.owner, self.ttl_s)
            except LeaseHeld as held:
                if not wait:
                    raise
                await asyncio.sleep(min(max(held.expires_in_s, 0.02), 0.2))
                continue
            self._deadline = started + lease.expires_in_s
            break
        # Most runs end before the first renewal is due: a timer costs less than a task.
        self._timer = asyncio.get_running_loop().call_later(self.ttl_s / 3, self._start_renewing)

    def _start_renewing(self) -> None:
        self._timer = None
        self._renewer = asyncio.ensure_future(self._renew_forever())

    def check(self) -> None:
        """Raise `LeaseLost` when the lease may have lapsed: called before every effect."""
        if time.monotonic() >= self._deadline:
            raise LeaseLost(self.name)

    async def release(self, *, write: bool = True) -> None:
        """Stop renewing and, with `write`, free the lease for others now rather than at expiry."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
            self._renewer = None
        if write and time.monotonic() < self._deadline:
            await self.store.release_lease(self.name, self.owner)
        self._deadline = 0.0

    async def _renew_forever(self) -> None:
        while True:
            started = time.monotonic()
            if started >= self._deadline:
                # Lapsed: another process may have driven the run meanwhile, so this one must
                # never act again, even if the lease happens to be free to take back.
                self._deadline = 0.0
                return
            try:
                lease = await self.store.acquire_lease(self.name, self.owner, self.ttl_s)
            except LeaseHeld:
                self._deadline = 0.0  # someone took it over: never act again
                return
            except Exception:  # a store hiccup: try again; `check` stops us if it lasts
                await asyncio.sleep(self.ttl_s / 3)
                continue
            self._deadline = started + lease.expires_in_s
            await asyncio.sleep(self.ttl_s / 3)
