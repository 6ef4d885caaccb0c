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
import weakref

from eudaimon.core.errors import LeaseHeld, LeaseLost
from eudaimon.stores.base import EventStore

DEFAULT_TTL_S = 30.0
EFFECT_MARGIN = 0.1
"""The part of a lease's lifetime an effect keeps clear of: a driver invokes a tool that may not
run twice only while more than this fraction of the TTL is left on its lease, by its own clock,
counted from the moment it SENT its last confirmed renewal (the store's TTL started later)."""


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


class _FirstRenewals:
    """The first renewal of every lease held on one event loop, behind a single timer.

    Most runs end long before their first renewal is due, so a timer armed and cancelled per
    lease was pure cost: it was the larger part of a short run's lease work. Keepers wait here
    instead; one timer fires for the earliest, and a keeper whose first renewal comes renews on
    its own from then on.
    """

    def __init__(self) -> None:
        # No reference to the loop: it keys this schedule weakly.
        self._due: dict[LeaseKeeper, float] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, keeper: LeaseKeeper, delay_s: float) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + delay_s
        self._due[keeper] = due
        timer = self._timer
        if timer is None or due < timer.when():
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(due, self._fire)

    def discard(self, keeper: LeaseKeeper) -> None:
        self._due.pop(keeper, None)

    def _fire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        for keeper, due in list(self._due.items()):
            if due <= now:
                del self._due[keeper]
                keeper._start_renewing()
        if self._due:
            self._timer = loop.call_at(min(self._due.values()), self._fire)


_FIRST_RENEWALS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _FirstRenewals] = weakref.WeakKeyDictionary()


def _first_renewals() -> _FirstRenewals:
    loop = asyncio.get_running_loop()
    schedule = _FIRST_RENEWALS.get(loop)
    if schedule is None:
        schedule = _FIRST_RENEWALS[loop] = _FirstRenewals()
    return schedule


class LeaseKeeper:
    def __init__(self, store: EventStore, name: str, *, ttl_s: float | None = None) -> None:
        self.store = store
        self.name = name
        self.owner = new_owner()
        self.ttl_s = ttl_s if ttl_s is not None else lease_ttl_s()
        self._deadline = 0.0
        self._taken_at = float("inf")
        """When (monotonic) the current unbroken holding of the lease began; whoever takes the
        lease again after it lapsed must set it anew (`acquire` does), so that `check_effect`
        refuses an effect whose intent was committed before the lapse."""
        self._renewer: asyncio.Task[None] | None = None
        self._waiting: _FirstRenewals | None = None

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
            self._taken_at = started
            break
        # Most runs end before the first renewal is due: waiting costs less than a task.
        self._waiting = _first_renewals()
        self._waiting.add(self, self.ttl_s / 3)

    def _start_renewing(self) -> None:
        self._waiting = None
        self._renewer = asyncio.ensure_future(self._renew_forever())

    def check(self) -> None:
        """Raise `LeaseLost` when the lease may have lapsed: called before every commit."""
        if time.monotonic() >= self._deadline:
            raise LeaseLost(self.name)

    def check_effect(self, since: float) -> None:
        """Raise `LeaseLost` unless the lease surely still holds, with a margin, and has been
        held without a break since `since` (monotonic: when the driver's last successful commit
        began). Called immediately before invoking a tool that may not run twice.

        A process stopped (SIGSTOP, a VM pause, a long GC) after its intent was committed may
        wake long after another process took the run over and an operator had the call
        retried; its monotonic clock kept counting, so this refuses the stale effect. What it
        cannot cover is a stop between this check and the effect itself: that is what a
        tool's `ctx.fencing_token` is for.
        """
        if time.monotonic() >= self._deadline - self.ttl_s * EFFECT_MARGIN or since < self._taken_at:
            raise LeaseLost(self.name)

    async def release(self, *, write: bool = True) -> None:
        """Stop renewing and, with `write`, free the lease for others now rather than at expiry."""
        if self._waiting is not None:
            self._waiting.discard(self)
            self._waiting = None
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
