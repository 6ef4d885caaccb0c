"""What can be done to a run from outside its loop: read it, decide for it, fork it, delete it.

These need only a store, not an agent, so the CLI and other processes use them directly: a
human can approve a call days later from a machine that never ran the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from eudaimon.core.errors import ConcurrencyConflict, DeadlinePassed, InvalidOperation, LeaseHeld, RunNotFound
from eudaimon.core.events import (
    ApprovalDecided,
    Event,
    EventData,
    ParentRef,
    RunCancelled,
    RunQueued,
    RunStarted,
    ToolReconciled,
)
from eudaimon.core.messages import JsonObject
from eudaimon.core.state import CallStatus, RunState
from eudaimon.runtime.loop.cancel_requests import CancelRequest, request_cancel
from eudaimon.runtime.loop.clock import new_run_id as fresh_run_id
from eudaimon.runtime.loop.clock import now
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.drivers import run_lease_name
from eudaimon.runtime.process.engines import open_engine
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.timers import fire
from eudaimon.runtime.process.tree import owner_below
from eudaimon.stores.base import EventStore

if TYPE_CHECKING:  # the CLI reads journals with this module; tools (pydantic) load only for an edit
    from eudaimon.runtime.loop.config import ApprovalPolicy
    from eudaimon.tools import Tool

Decide = Callable[[RunState], EventData]


async def append_decision(store: EventStore, run_id: str, decide: Decide) -> RunState:
    """Append the event `decide` derives from the latest state; decide again after a race.

    A run driven by an engine (`run_started.engine`, e.g. a Temporal workflow) is decided by
    sending it the decision, so that the process driving it learns of it at once.
    """
    while True:
        state = await load_state(store, run_id)
        decision = decide(state)
        if (
            state.engine
            and isinstance(decision, ApprovalDecided | ToolReconciled)
            and await open_engine(state.engine).decide(store, run_id, decision)
        ):
            return await load_state(store, run_id)
        journal = RunJournal(store, state, snapshot_every=0)
        journal.record(decision)
        try:
            await journal.flush()
        except ConcurrencyConflict:
            continue
        return state


def approval(
    state: RunState,
    call_id: str,
    approved: bool,
    *,
    by: str | None = None,
    note: str | None = None,
    arguments: JsonObject | None = None,
    tool: Tool | None = None,
    at: datetime | None = None,
) -> ApprovalDecided:
    """The decision on a call awaiting approval; `InvalidOperation` when it is not waiting.

    `at` is the time the decision is judged at against the call's deadline: now unless given
    (a Temporal workflow gives its own clock, which its replay reads again identically).

    `arguments`, with an approval only, are the approver's edit of the call: checked against
    `tool`'s schema (or the one the journal holds), `InvalidArguments` naming the problem.
    """
    run_id = state.run_id
    require_decision(approved)
    _refuse_if_finished(state, call_id)
    progress = state.calls.get(call_id)
    if progress is None:
        waiting = ", ".join(c.id for c in state.awaiting_approval()) or "none"
        raise InvalidOperation(f"run {run_id} has no call {call_id!r} awaiting approval (awaiting: {waiting})")
    if progress.timed_out or (
        progress.status is CallStatus.AWAITING_APPROVAL
        and progress.deadline is not None
        and progress.deadline <= (at or now())
    ):
        raise DeadlinePassed(
            f"call {call_id!r} of run {run_id}: the approval deadline passed at {_when(progress.deadline)} "
            f"with no decision, so the call was {'cancelled with the run' if progress.on_timeout == 'cancel' else 'denied'}"
            "; a decision after the deadline is refused"
        )
    if progress.status is not CallStatus.AWAITING_APPROVAL:
        raise InvalidOperation(
            f"call {call_id!r} of run {run_id} is {progress.status.value}, not awaiting approval; "
            "a call is decided once"
        )
    if arguments is not None:
        if not approved:
            raise InvalidOperation(f"call {call_id!r}: edited arguments go with an approval, not a denial")
        from eudaimon.runtime.process.edited_arguments import (
            checked_edit,  # loads the tools (pydantic) for an edit only
        )

        arguments = checked_edit(state, call_id, arguments, tool)
        asked = progress.asked if progress.asked is not None else progress.call.arguments
        original = asked if isinstance(asked, dict) else _as_object(asked)
        return ApprovalDecided(
            call_id=call_id, approved=True, by=by, note=note, arguments=arguments, original_arguments=original
        )
    return ApprovalDecided(call_id=call_id, approved=approved, by=by, note=note)


def require_decision(approved: object) -> None:
    """A decision is a real boolean: `"false"`, `0` or `None` are refused (`InvalidOperation`),
    never read for their truth (the string "false" is true)."""
    if not isinstance(approved, bool):
        raise InvalidOperation(
            f"a decision is True (approve) or False (deny), got {type(approved).__name__} {str(approved)[:40]!r}; "
            "nothing was recorded"
        )


def _as_object(arguments: str) -> JsonObject | None:
    """The model's arguments as an object, when its raw text reads as one (for the record)."""
    import json

    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _when(at: datetime | None) -> str:
    return "its deadline" if at is None else at.isoformat(timespec="seconds")


def reconciliation(
    state: RunState, call_id: str, *, output: str | None = None, retry: bool = False, by: str | None = None
) -> ToolReconciled:
    """The settlement of a call whose outcome is unknown; `InvalidOperation` when it is not."""
    if (output is None) == (not retry):
        raise InvalidOperation("reconcile needs exactly one of output=... or retry=True")
    _refuse_if_finished(state, call_id)
    progress = state.calls.get(call_id)
    if progress is None or progress.status is not CallStatus.UNKNOWN:
        unknown = ", ".join(c.id for c in state.unknown_outcomes()) or "none"
        raise InvalidOperation(f"call {call_id!r} of run {state.run_id} has no unknown outcome (unknown: {unknown})")
    return ToolReconciled(call_id=call_id, output=output, retry=retry, by=by)


async def approve(
    store: EventStore,
    run_id: str,
    call_id: str,
    approved: bool,
    *,
    by: str | None = None,
    note: str | None = None,
    arguments: JsonObject | None = None,
    tool: Tool | None = None,
    policy: ApprovalPolicy | None = None,
) -> RunState:
    """Record a human's decision on a call awaiting approval; with `arguments`, the approver's
    edit of the call, which then runs with them (see `approval`). `policy`, the agent's
    approval policy, judges the edit first: DENY raises `EditDenied` and records nothing.

    A call of a child run (an agent used as a tool) may be decided on any run above it; the
    calls waiting on that child are then released, so resuming the top run continues them all.
    Deciding a call that waits on a child decides every call that child waits for.
    """
    require_decision(approved)
    top = await load_state(store, run_id)
    if call_id in top.children or call_id not in top.calls:
        if arguments is not None and call_id in top.children:
            raise InvalidOperation(
                f"call {call_id!r} waits on its child run {top.children[call_id]}: edit the arguments of that "
                "run's own call instead"
            )
        settled = await _decide_below(store, top, call_id, CallStatus.AWAITING_APPROVAL, approved, by, note, arguments)
        if settled is not None:
            return settled
    if arguments is not None and policy is not None and approved:
        from eudaimon.runtime.process.edited_arguments import judged_edit

        await judged_edit(top, call_id, arguments, tool, policy)
    try:
        return await append_decision(
            store,
            run_id,
            lambda state: approval(state, call_id, approved, by=by, note=note, arguments=arguments, tool=tool),
        )
    except DeadlinePassed:
        await fire(store, run_id)  # the deadline is recorded before the late decision is refused
        raise


async def reconcile(
    store: EventStore,
    run_id: str,
    call_id: str,
    *,
    output: str | None = None,
    retry: bool = False,
    by: str | None = None,
) -> RunState:
    """Settle a call whose outcome is unknown, with the output it had or by retrying it.

    An unknown outcome means a process started the call and was not seen to finish it. Not
    seeing its effect is no proof that it did not happen while that process may still be
    alive: a stopped process (SIGSTOP, a paused VM, a long GC) may wake and act. The runtime
    refuses to invoke such a tool once its lease may have lapsed, but a process stopped between
    that check and the effect is stopped only by a system that refuses stale fencing tokens
    (`ToolContext.fencing_token`). Before `retry=True`, make sure the earlier process is gone.

    Raises:
        InvalidOperation: not exactly one of `output` and `retry`; the call has no unknown
            outcome; or the run has finished (a finished run takes no more events).
    """
    if (output is None) == (not retry):
        raise InvalidOperation("reconcile needs exactly one of output=... or retry=True")
    top = await load_state(store, run_id)
    if call_id not in top.calls or (call_id in top.children and retry):
        settled = await _decide_below(store, top, call_id, CallStatus.UNKNOWN, output, by, retry, None)
        if settled is not None:
            return settled
    return await append_decision(
        store, run_id, lambda state: reconciliation(state, call_id, output=output, retry=retry, by=by)
    )


async def _decide_below(
    store: EventStore, top: RunState, call_id: str, status: CallStatus, *decision: object
) -> RunState | None:
    """Decide `call_id` in the child run that holds it, then release the calls above it that
    waited only for that; None when no child below `top` holds it."""
    if call_id in top.children:  # the call waiting on a child: decide all its child waits for
        here, child_id = call_id, top.children[call_id]
        child = await load_state(store, child_id)
        targets = [
            c.id
            for c in (child.awaiting_approval() if status is CallStatus.AWAITING_APPROVAL else child.unknown_outcomes())
        ]
    else:
        found = await owner_below(store, top, call_id, status)
        if found is None:
            return None
        (here, child_id), targets = found, [call_id]
    for target in targets:
        if status is CallStatus.AWAITING_APPROVAL:
            approved, by, note, edited = decision
            await approve(store, child_id, target, bool(approved), by=by, note=note, arguments=edited)  # type: ignore[arg-type]
        else:
            output, by, retry, _ = decision
            await reconcile(store, child_id, target, output=output, retry=bool(retry), by=by)  # type: ignore[arg-type]
    child = await load_state(store, child_id)
    still = child.awaiting_approval() if status is CallStatus.AWAITING_APPROVAL else child.unknown_outcomes()
    if still:
        return top
    by = decision[1]
    note = f"decided in its child run {child_id}"

    def release(state: RunState) -> EventData:
        if status is CallStatus.AWAITING_APPROVAL:
            return ApprovalDecided(call_id=here, approved=True, by=by, note=note)  # type: ignore[arg-type]
        return ToolReconciled(call_id=here, retry=True, by=by)  # type: ignore[arg-type]

    return await append_decision(store, top.run_id, release)


def _refuse_if_finished(state: RunState, call_id: str) -> None:
    """A finished run takes no decision: its terminal event stays its last (and `gc` deletes
    only runs whose last event is terminal)."""
    if state.status.is_terminal:
        run_id = state.run_id
        raise InvalidOperation(
            f"run {run_id} is {state.status.value}: a finished run takes no more decisions, so call {call_id!r} "
            f"was left as it is; fork the run (`eudaimon runs fork {run_id} --at SEQ`) to go on from an earlier point"
        )


async def cancel(
    store: EventStore, run_id: str, *, reason: str = "cancelled", by: str | None = None
) -> RunState | None:
    """Cancel a run that has not ended, wherever it is driven.

    The request is left in the store first (`cancel_requests`). A run an engine drives (a
    Temporal workflow, waiting or not) is handed the request there, and None returned: its
    workflow journals `run_cancelled` and ends. Otherwise, if no process holds the run's
    lease (the run waits for a human, or its driver died), `run_cancelled` is appended here,
    under the lease, and the cancelled state returned. If a driver holds the lease, None is
    returned: that driver journals `run_cancelled` at its next step boundary, and a run paused
    before it looked is cancelled when it is next resumed.

    Raises:
        RunNotFound: no such run.
        InvalidOperation: the run has already ended.
    """

    def decide(state: RunState) -> EventData:
        if state.status.is_terminal:
            raise InvalidOperation(
                f"run {run_id} is {state.status.value}; only a run that has not ended can be cancelled"
            )
        return RunCancelled(reason=reason, by=by)

    state = await load_state(store, run_id)
    decide(state)
    await request_cancel(store, run_id, CancelRequest(reason=reason, by=by))
    if state.engine and await open_engine(state.engine).cancel(run_id, reason, by):
        return None
    keeper = LeaseKeeper(store, run_lease_name(run_id))
    try:
        await keeper.acquire(wait=False)
    except LeaseHeld:
        return None
    try:
        return await append_decision(store, run_id, decide)
    finally:
        await keeper.release()


async def fork(
    store: EventStore, run_id: str, at_seq: int, *, new_run_id: str | None = None, held: bool = False
) -> str:
    """Start a run whose journal is the parent's up to `at_seq`, then its own.

    The prefix is copied into the fork's journal, with `run_started.parent` naming where it
    came from, so the fork never depends on the parent's rows: retention may delete the
    parent while forks live on. Everything recorded up to `at_seq` counts as done in the
    fork; `resume` continues it from there under the usual recovery rules. A `held` fork is
    left alone by recovery sweeps until a resume has driven it (it may repeat effects).
    """
    events = await store.load(run_id)
    if not events:
        raise RunNotFound(run_id)
    if not 0 <= at_seq < len(events):
        raise InvalidOperation(f"run {run_id} has events 0..{len(events) - 1}; cannot fork at seq {at_seq}")
    child = new_run_id or fresh_run_id()
    # A run that was queued has its `run_started` at seq 1, after `run_queued`: the fork keeps
    # both, so its seqs stay the parent's.
    begun = 1 if isinstance(events[0].data, RunQueued) else 0
    first = events[begun].data if begun < len(events) else None
    if not isinstance(first, RunStarted) or at_seq < begun:
        raise InvalidOperation(
            f"run {run_id} had not started at seq {at_seq} (it was queued); fork it at seq {begun} or later"
        )
    copied = [Event(child, e.seq, e.at, e.type, e.data) for e in events[:begun]]
    copied.append(
        Event.of(
            child,
            begun,
            events[begun].at,
            replace(first, parent=ParentRef(run_id, at_seq, held=held), uses_memory=False),
        )
    )
    copied += [Event(child, e.seq, e.at, e.type, e.data) for e in events[begun + 1 : at_seq + 1]]
    await store.append(child, 0, copied)
    return child


async def gc(store: EventStore, older_than: timedelta, *, dry_run: bool = False) -> list[str]:
    """Delete finished runs last updated more than `older_than` ago, with their snapshots.

    Forks carry their own copy of the history they share with a parent, so deleting a parent
    takes nothing from them.
    """
    cutoff: datetime = now() - older_than
    doomed = [r.run_id for r in await store.list_runs(limit=1_000_000_000) if r.is_finished and r.updated_at < cutoff]
    if not dry_run:
        for run_id in doomed:
            await store.delete_run(run_id)
    return doomed
