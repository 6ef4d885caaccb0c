"""Run and thread leases: one process drives a run at a time, and a stalled one stops.

A driver takes the lease before its first effect and holds it while it runs. Every lease a
process holds on one store is renewed together, in one statement behind one timer
(`_Renewals`): renewing each lease on its own made a busy process late for some of them, and
10,000 runs lost their leases to their own process's load. A renewal that comes late takes the
lease back if no one else took it meanwhile (the store renews only a row still naming its
owner), and so does a driver about to commit (`LeaseKeeper.ensure`), together with every other
driver asking in the same turn of the loop and the timer's own late batch, in one statement
(`_Renewals.renew_overdue`): a loop that lagged finds most of its runs overdue at once, and one
statement per run then made it lag more. Only a lease another process holds is lost, and only
its own run stops. The commit itself checks, in its own transaction, that the lease is
still this driver's and unexpired, so a process that stalled (SIGSTOP, a VM pause) and woke
after another took over fails instead of landing its commit. A crashed process's lease simply
expires; a driver that stops (its run finished or paused) gives it up at once.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import os
import secrets
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass

from eudaimon.core.errors import LeaseHeld, LeaseLost
from eudaimon.runtime.loop.per_store import PerStore
from eudaimon.stores.base import EventStore, Fence

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


class _Renewals:
    """Every lease this process holds on one store, on one event loop, renewed together.

    Renewals fall due on a grid of `ttl / 6` seconds, so the leases taken during one slot are
    renewed in one statement (`EventStore.renew_leases`) when it comes, between a third and half
    a lifetime after they were last confirmed: half a lifetime is left for a renewal that is late.
    One timer waits for the earliest slot (a heap, so adding and dropping a lease cost
    O(log n), whatever the number held). Most runs end before their first renewal is due: they
    cost a heap entry, no task and no statement.
    """

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._due: dict[LeaseKeeper, float] = {}
        self._heap: list[tuple[float, int, LeaseKeeper]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._renewing: asyncio.Task[None] | None = None
        self._overdue: list[LeaseKeeper] = []
        self._overdue_done: asyncio.Future[None] | None = None
        self._overdue_task: asyncio.Task[None] | None = None

    def add(self, keeper: LeaseKeeper) -> None:
        loop = asyncio.get_running_loop()
        slot = keeper.ttl_s / 6
        due = math.ceil((loop.time() + keeper.ttl_s / 3) / slot) * slot
        self._due[keeper] = due
        heapq.heappush(self._heap, (due, next(self._order), keeper))
        self._arm(loop)

    def discard(self, keeper: LeaseKeeper) -> None:
        self._due.pop(keeper, None)
        if not self._due and self._timer is not None and self._renewing is None:
            self._timer.cancel()
            self._timer = None
            self._heap.clear()

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        heap = self._heap
        while heap and self._due.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)  # dropped or rescheduled since it was pushed
        if not heap or self._renewing is not None:
            return  # nothing held, or the renewal in flight arms the timer when it is done
        due = heap[0][0]
        if self._timer is not None:
            if self._timer.when() <= due:
                return
            self._timer.cancel()
        self._timer = loop.call_at(due, self._fire)

    def _take_due(self, now: float) -> list[LeaseKeeper]:
        """Unschedule and return the keepers whose renewal is due by `now`."""
        batch: list[LeaseKeeper] = []
        while self._heap and self._heap[0][0] <= now:
            due, _, keeper = heapq.heappop(self._heap)
            if self._due.get(keeper) == due:
                del self._due[keeper]
                batch.append(keeper)
        return batch

    def _fire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        batch = self._take_due(loop.time())
        if batch and self._overdue_done is not None:
            self._overdue += batch  # runs about to commit asked already: one statement for all
            self._arm(loop)
        elif batch:
            self._renewing = loop.create_task(self._renew(batch))
        else:
            self._arm(loop)

    async def _renew(self, batch: list[LeaseKeeper]) -> None:
        try:
            by_ttl: dict[float, list[LeaseKeeper]] = {}
            for keeper in batch:
                by_ttl.setdefault(keeper.ttl_s, []).append(keeper)
            for ttl_s, keepers in by_ttl.items():
                started = time.monotonic()
                try:
                    held = await renew(self.store, keepers, ttl_s)
                except Exception:  # a store hiccup: try again soon; `check` stops a holder if it lasts
                    for keeper in keepers:
                        if keeper.held:
                            self.add(keeper)
                    continue
                for keeper, ok in zip(keepers, held, strict=True):
                    if not keeper.held:
                        continue  # released while the statement ran
                    if ok:
                        keeper.confirmed(started)
                        self.add(keeper)
                    else:
                        keeper.lost()
        finally:
            self._renewing = None
            self._arm(asyncio.get_running_loop())

    async def renew_overdue(self, keeper: LeaseKeeper) -> None:
        """Renew `keeper` now, together with every keeper that asks in the same turn of the
        loop: a process late for its renewals (its loop busy) finds many overdue at once, and
        renewing each alone cost a statement per run, where the timer's batch costs one.

        Raises what the store raised; otherwise `keeper.held` says whether it is still held."""
        self._overdue.append(keeper)
        done = self._overdue_done
        if done is None:
            loop = asyncio.get_running_loop()
            done = self._overdue_done = loop.create_future()
            done.add_done_callback(_retrieved)  # every asker may have been cancelled meanwhile
            # A task's first step runs at the loop's next turn: whoever asks before it joins in.
            self._overdue_task = loop.create_task(self._renew_overdue())
        await asyncio.shield(done)

    async def _renew_overdue(self) -> None:
        batch, self._overdue = self._overdue, []
        done, self._overdue_done = self._overdue_done, None
        assert done is not None
        batch += self._take_due(asyncio.get_running_loop().time())  # the timer's, late too: one statement
        try:
            held = [k for k in dict.fromkeys(batch) if k.held]
            by_ttl: dict[float, list[LeaseKeeper]] = {}
            for keeper in held:
                by_ttl.setdefault(keeper.ttl_s, []).append(keeper)
            for ttl_s, keepers in by_ttl.items():
                started = time.monotonic()
                for keeper, ok in zip(keepers, await renew(self.store, keepers, ttl_s), strict=True):
                    if not keeper.held:
                        continue  # released while the statement ran
                    if ok:
                        keeper.confirmed(started)
                        self.add(keeper)  # its next renewal counts from this one
                    else:
                        keeper.lost()
        except Exception as exc:  # the askers' commits fail with it; the timer tries again soon
            for keeper in batch:
                if keeper.held and keeper not in self._due:
                    self.add(keeper)
            done.set_exception(exc)
        else:
            done.set_result(None)


def _retrieved(done: asyncio.Future[None]) -> None:
    if not done.cancelled():
        done.exception()


async def renew(store: EventStore, keepers: Sequence[LeaseKeeper], ttl_s: float) -> list[bool]:
    """Renew `keepers`' leases for `ttl_s`: which are still theirs.

    A store with `renew_leases` renews them in one statement and takes back a lapsed lease no
    one else took. Any other store renews them one by one, and only those not lapsed by their
    holder's clock (another process may have taken such a lease and given it up since)."""
    bulk = getattr(store, "renew_leases", None)
    if bulk is not None:
        held: list[bool] = await bulk([(k.name, k.owner) for k in keepers], ttl_s)
        return held
    out: list[bool] = []
    for keeper in keepers:
        if time.monotonic() >= keeper.deadline:
            out.append(False)
            continue
        try:
            await store.acquire_lease(keeper.name, keeper.owner, ttl_s)
            out.append(True)
        except LeaseHeld:
            out.append(False)
    return out


_RENEWALS = PerStore(_Renewals)


_HOLDERS_SEEN: dict[str, str] = {}
_HOLDERS_KEPT = 4096


def _seen_holding(name: str, owner: str) -> None:
    """Remember who held `name` when this process was refused it (the last few thousand)."""
    _HOLDERS_SEEN.pop(name, None)
    _HOLDERS_SEEN[name] = owner
    if len(_HOLDERS_SEEN) > _HOLDERS_KEPT:
        del _HOLDERS_SEEN[next(iter(_HOLDERS_SEEN))]


async def acquire_together(keepers: Sequence[LeaseKeeper], *, wait: bool = True) -> None:
    """Take every lease of `keepers`, all asked for in one turn of the loop: one round trip to
    the store (a SQLite store's worker takes them in one transaction), where taking them in turn
    cost a round trip each. All or none: when one cannot be had (or the caller is cancelled),
    those taken are given back and its error raised."""
    try:
        outcomes = await asyncio.gather(*(k.acquire(wait=wait) for k in keepers), return_exceptions=True)
    except BaseException:
        await release_together(keepers)
        raise
    failed = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if failed:
        await release_together(keepers)
        raise failed[0]


async def release_together(keepers: Sequence[LeaseKeeper]) -> None:
    """Give up every lease of `keepers` still held, in one round trip (`acquire_together`); a
    failure is raised once all were asked for (a lease not given up lapses at its expiry)."""
    outcomes = await asyncio.gather(*(k.release() for k in keepers), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


@dataclass(frozen=True, slots=True, kw_only=True)
class HeldLeases:
    """The leases a run's starter takes for it before it is driven, passed on to its driver as
    one value: its thread's (None: it has no thread) and its own (None: the driver takes it
    itself). Taking the run's own with its thread's costs the store one round trip for both
    (`acquire_together`), and the driver gives them up together once memory is fed: a run of a
    thread then asks the store no more often than a run of none."""

    run: LeaseKeeper | None = None
    """The run's own lease, when its starter took it."""
    thread: LeaseKeeper | None = None
    """The lease of the run's thread: held until the run has stopped and memory was fed."""

    @property
    def keepers(self) -> tuple[LeaseKeeper, ...]:
        return tuple(k for k in (self.run, self.thread) if k is not None)

    async def acquire(self, *, wait: bool = True) -> None:
        """Take them all in one round trip, all or none (`acquire_together`)."""
        await acquire_together(self.keepers, wait=wait)

    async def release(self) -> None:
        """Give up those still held, in one round trip; those already given up cost nothing, so
        whoever may be the last to hold them calls this (the driver, then the starter)."""
        await release_together(self.keepers)


NO_LEASES = HeldLeases()
"""What a run's starter holds when it took nothing: the driver takes the run's lease itself."""


class LeaseKeeper:
    """One lease held by one driver: taken, kept renewed, checked before effects, given up."""

    def __init__(self, store: EventStore, name: str, *, ttl_s: float | None = None) -> None:
        self.store = store
        self.name = name
        self.owner = new_owner()
        self.ttl_s = ttl_s if ttl_s is not None else lease_ttl_s()
        self.deadline = 0.0
        """When the lease may lapse, by this process's monotonic clock: `ttl_s` after the start
        of the last request that confirmed it."""
        self._taken_at = float("inf")
        """When (monotonic) the current unbroken holding of the lease began; whoever takes the
        lease again after it lapsed sets it anew (`acquire`, and a late renewal in `confirmed`),
        so that `check_effect` refuses an effect whose intent was committed before the lapse."""
        self.held = False
        self._schedule: _Renewals | None = None
        self.previous_holder: str | None = None
        """Who held the lease when this process last found it taken (None if it never did): a
        driver taking over from a lost one names it (`runtime.process.takeover`)."""

    @property
    def fence(self) -> Fence:
        """What a commit made under this lease names, so that the store can check it."""
        return Fence(self.name, self.owner, self.ttl_s, taken_back=self.taken_back)

    async def acquire(self, *, wait: bool = True) -> None:
        """Take the lease; while another live holder has it, wait for it to lapse (or raise)."""
        while True:
            started = time.monotonic()
            try:
                lease = await self.store.acquire_lease(self.name, self.owner, self.ttl_s)
            except LeaseHeld as held:
                _seen_holding(self.name, held.owner)
                if not wait:
                    raise
                await asyncio.sleep(min(max(held.expires_in_s, 0.02), 0.2))
                continue
            self.deadline = started + lease.expires_in_s
            self._taken_at = started
            self.previous_holder = _HOLDERS_SEEN.pop(self.name, None)
            break
        self.held = True
        self._schedule = _RENEWALS.get(self.store)
        self._schedule.add(self)

    def confirmed(self, started: float) -> None:
        """A renewal sent at `started` (monotonic) was granted; sent after the lease may have
        lapsed, it took the lease back: a new holding begins (`check_effect`)."""
        if started >= self.deadline:
            self._taken_at = started
        self.deadline = max(self.deadline, started + self.ttl_s)  # a commit may have taken it back since

    def taken_back(self, sent: float) -> None:
        """A commit sent at `sent` (monotonic) found the lease lapsed, still naming this owner,
        took it back for `ttl_s` and landed (`Fence.taken_back`): it holds until `sent + ttl_s`
        at least. Without this, `check_effect` would refuse the commit's own intent until the
        next renewal. The holding is unbroken: a lease another process took names that process,
        and the store takes back only one naming this owner."""
        if self.held:
            self.deadline = max(self.deadline, sent + self.ttl_s)

    def lost(self) -> None:
        """Another process holds the lease now: this driver must never act again."""
        self.deadline = 0.0
        self.held = False

    def check(self) -> None:
        """Raise `LeaseLost` when the lease may have lapsed by this process's clock."""
        if time.monotonic() >= self.deadline:
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
        if time.monotonic() >= self.deadline - self.ttl_s * EFFECT_MARGIN or since < self._taken_at:
            raise LeaseLost(self.name)

    async def ensure(self) -> None:
        """Before a commit: if the lease's renewal is overdue (a busy or stalled process), take
        it back now, which succeeds only if no one else took it meanwhile.

        Raises:
            LeaseLost: another process holds the lease (or this keeper gave it up).
        """
        if not self.held:
            raise LeaseLost(self.name)
        if time.monotonic() < self.deadline - self.ttl_s / 3:
            return  # renewed on time: at least a third of its lifetime is left
        schedule = self._schedule if self._schedule is not None else _RENEWALS.get(self.store)
        await schedule.renew_overdue(self)
        if not self.held:
            raise LeaseLost(self.name)

    async def release(self, *, write: bool = True) -> None:
        """Stop renewing and, with `write`, free the lease for others now rather than at expiry
        (the store frees it only if it is still this keeper's)."""
        was_held, self.held = self.held, False
        if self._schedule is not None:
            self._schedule.discard(self)
            self._schedule = None
        if write and was_held:
            await self.store.release_lease(self.name, self.owner)
        self.deadline = 0.0
