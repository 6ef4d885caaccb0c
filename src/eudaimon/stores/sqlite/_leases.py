"""The SQLite journal's leases: taken, renewed in bulk, given up, and checked by a fenced commit.

Every statement here runs inside a transaction the store began with `BEGIN IMMEDIATE`, so it
holds SQLite's write lock: no other process can grant, renew or take a lease meanwhile, and a
lease read here is the lease until the commit. Leases expire by the wall clock (`time.time()`),
the clock every process on the machine shares.
"""

from __future__ import annotations

import sqlite3
import time

from eudaimon.core.errors import LeaseHeld, LeaseLost
from eudaimon.stores.base import Fence, Lease

LEASE_GRACE_S = 60.0
"""How long after expiring a lease row is kept (it only says who held it last)."""
SWEEP_EVERY = 512
"""Lease takings between sweeps of long-expired lease rows (a scan of the table: once per
taking, it made 10,000 concurrent runs quadratic)."""
RENEW_CHUNK = 400
"""Leases per renewing statement: two parameters each, under SQLite's oldest limit of 999."""


def acquire(conn: sqlite3.Connection, name: str, owner: str, ttl_s: float, *, sweep: bool) -> Lease:
    now = time.time()  # read under the write lock: no other process can grant meanwhile
    if sweep:  # the leases of crashed processes, now and then, in a transaction that writes anyway
        conn.execute("DELETE FROM leases WHERE expires_at < ?", (now - LEASE_GRACE_S,))
    if conn.execute(_TAKE, (name, owner, now + ttl_s, now)).rowcount == 0:
        held = conn.execute("SELECT owner, expires_at FROM leases WHERE name = ?", (name,)).fetchone()
        raise LeaseHeld(name, held[0], held[1] - now)
    return Lease(name, owner, ttl_s)


_TAKE = (
    "INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE"
    " SET owner = excluded.owner, expires_at = excluded.expires_at"
    " WHERE leases.owner = excluded.owner OR leases.expires_at <= ?"
)
"""Take the lease unless another owner holds it unexpired (then no row changes): one statement,
so one step of SQLite's rather than a read and a write (each step gives the GIL up: `_sql`)."""


def renew(conn: sqlite3.Connection, pairs: list[tuple[str, str]], ttl_s: float) -> list[bool]:
    until = time.time() + ttl_s
    renewed: set[tuple[str, str]] = set()
    for start in range(0, len(pairs), RENEW_CHUNK):
        chunk = pairs[start : start + RENEW_CHUNK]
        values = ", ".join("(?, ?)" for _ in chunk)
        rows = conn.execute(
            f"UPDATE leases SET expires_at = ? WHERE (name, owner) IN (VALUES {values}) RETURNING name, owner",
            (until, *(part for pair in chunk for part in pair)),
        ).fetchall()
        renewed.update((str(name), str(owner)) for name, owner in rows)
    return [pair in renewed for pair in pairs]


def holders(conn: sqlite3.Connection, names: list[str]) -> dict[str, Lease]:
    """The leases among `names` unexpired now (a read: no write lock, so only as of now)."""
    now = time.time()
    held: dict[str, Lease] = {}
    for start in range(0, len(names), RENEW_CHUNK):
        chunk = names[start : start + RENEW_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        rows = conn.execute(
            f"SELECT name, owner, expires_at FROM leases WHERE name IN ({marks}) AND expires_at > ?", (*chunk, now)
        ).fetchall()
        held.update((str(name), Lease(str(name), str(owner), float(until) - now)) for name, owner, until in rows)
    return held


_FENCE_HOLDS = "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM leases WHERE name = ? AND owner = ? AND expires_at > ?)"
"""No row while the lease names the owner unexpired: a query with no row is one step."""


def check_fence(conn: sqlite3.Connection, fence: Fence, began_at: float) -> bool:
    """The last statement of a fenced append, in its transaction (holding the write lock; the
    append's own statements began at `began_at`, by `time.time()`): the lease still names the
    fence's owner, and is unexpired or is taken back (`Fence`). Raising undoes the append.
    True when the lease was taken back (the caller tells the fence once the commit lands).

    Raises:
        LeaseLost: another owner holds the lease, or it is gone; or it lapsed while this
            append ran under the lock (the process stalled inside its commit), or lapsed and
            the fence takes nothing back.
    """
    now = time.time()
    if conn.execute(_FENCE_HOLDS, (fence.name, fence.owner, now)).fetchone() is None:
        return False  # the usual case, in one step of SQLite's (each step gives the GIL up: `_sql`)
    held = conn.execute("SELECT owner, expires_at FROM leases WHERE name = ?", (fence.name,)).fetchone()
    if held is None or held[0] != fence.owner:
        raise LeaseLost(fence.name)
    if held[1] > now:
        return False
    if held[1] > began_at or fence.ttl_s <= 0:
        raise LeaseLost(fence.name)
    conn.execute("UPDATE leases SET expires_at = ? WHERE name = ?", (now + fence.ttl_s, fence.name))
    return True
