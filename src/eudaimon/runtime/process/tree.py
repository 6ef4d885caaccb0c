"""The tree of runs: a parent run and the child runs its calls started (agents as tools,
handoffs). A decision a child waits for can be made on any run above it."""

from __future__ import annotations

from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import CallStatus, PendingCall, RunState
from eudaimon.runtime.loop.scope import child_run_id
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore


async def _load(store: EventStore, run_id: str) -> RunState | None:
    try:
        return await load_state(store, run_id)
    except RunNotFound:
        return None


def delegated(state: RunState, status: CallStatus) -> list[tuple[str, str]]:
    """(call id, child run id) of the current batch's calls in `status` that wait on a child."""
    return [(cid, run) for cid, run in state.children.items() if (p := state.calls.get(cid)) and p.status is status]


async def owner_below(store: EventStore, state: RunState, call_id: str, status: CallStatus) -> tuple[str, str] | None:
    """(call id here, child run id) of the child whose subtree has call `call_id` in `status`."""
    for cid, run in delegated(state, status):
        child = await _load(store, run)
        if child is None:
            continue
        progress = child.calls.get(call_id)
        if progress is not None and progress.status is status:
            return cid, run
        if await owner_below(store, child, call_id, status) is not None:
            return cid, run
    return None


async def waiting_calls(store: EventStore, state: RunState, status: CallStatus) -> list[PendingCall]:
    """The calls in `status` anywhere in the tree below and including `state`, deepest first:
    a call waiting on a child is replaced by what the child waits for. A call awaiting approval
    carries the arguments the human is asked about, as `RunState.awaiting_approval` gives them."""
    found: list[PendingCall] = []
    below = dict(delegated(state, status))
    for progress in state.calls.values():
        if progress.status is not status:
            continue
        child = await _load(store, below[progress.call.id]) if progress.call.id in below else None
        deeper = await waiting_calls(store, child, status) if child is not None else []
        asked = progress.as_asked if status is CallStatus.AWAITING_APPROVAL else progress.call
        found.extend(deeper or [asked])
    return found


async def run_tree(store: EventStore, state: RunState, depth: int = 0) -> list[tuple[int, str, RunState]]:
    """Every run below `state`, depth first: (depth, id of the call that started it, state).

    Children are found from the links the parent journaled and, for a call interrupted before
    its link was written, by the id a child of that call would have."""
    found: list[tuple[int, str, RunState]] = [(depth, state.parent_call.call_id if state.parent_call else "", state)]
    children = dict(state.children)
    for cid, progress in state.calls.items():
        if cid not in children and progress.status is CallStatus.STARTED:
            children[cid] = child_run_id(state.run_id, cid)
    for run in children.values():
        child = await _load(store, run)
        if child is not None:
            found.extend(await run_tree(store, child, depth + 1))
    return found
