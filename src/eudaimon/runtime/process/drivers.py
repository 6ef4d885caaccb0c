"""Whether a process drives a running run: read from the run's lease, which is never taken here.

A run's journal reads `running` from one event to the next, whether a process is in the middle
of its model call or was killed an hour ago: the journal cannot tell them apart. The run's
lease can. Whoever drives a run holds `run:{run_id}` and renews it every few seconds, so it
lapses within `EUDAIMON_LEASE_TTL_S` of its driver's end, and a run whose lease no one holds
unexpired has no driver now: a server on the store takes it over, or someone resumes it.
Read through the store's optional `lease_holders` (every store here has it); None where a
store cannot say, and then callers say they cannot know. A run an engine drives (Temporal) has
no lease: its workflow drives it, and it is never called driverless.
"""

from __future__ import annotations

from collections.abc import Iterable

from eudaimon.core.errors import EudaimonError
from eudaimon.core.run_index import RunRow
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore, Lease


def run_lease_name(run_id: str) -> str:
    """The name of the lease a run's driver holds."""
    return f"run:{run_id}"


async def run_drivers(store: EventStore, run_ids: Iterable[str]) -> dict[str, Lease] | None:
    """The held leases of the runs among `run_ids` that a process drives now, by run id (a run
    not in it has no driver); None when the store cannot tell."""
    read = getattr(store, "lease_holders", None)
    if read is None:
        return None
    names = {run_lease_name(run_id): run_id for run_id in run_ids}
    if not names:
        return {}
    held: dict[str, Lease] = await read(list(names))
    return {names[name]: lease for name, lease in held.items() if name in names}


async def driverless_runs(store: EventStore, rows: Iterable[RunRow]) -> frozenset[str]:
    """The ids of the running runs among the index's `rows` that no process drives now: driven
    by a process's own loop (no engine) and their lease held by none. Empty when the store
    cannot tell. One read of the leases; a row written before rows named their engine is folded
    to learn it, and only when its lease is free."""
    own = [row for row in rows if row.status == "running" and not row.engine]
    drivers = await run_drivers(store, [row.run_id for row in own])
    if drivers is None:
        return frozenset()
    idle = [row for row in own if row.run_id not in drivers]
    return frozenset([row.run_id for row in idle if row.engine == "" or await _own_loop(store, row.run_id)])


async def _own_loop(store: EventStore, run_id: str) -> bool:
    """Whether the run's journal says a process's own loop drives it; False when the journal
    cannot be read (a listing marks nothing it cannot tell, and does not fail for it)."""
    try:
        return not (await load_state(store, run_id)).engine
    except EudaimonError:
        return False
