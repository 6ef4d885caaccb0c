"""Starting a queued run (`run_queued` journaled, no `run_started` yet) when its turn comes.

It is `begin_prompt` after the input guardrails, which ran before the run was queued: holding
the thread's lease (and, as a prompt does, the run's own with it: `RunDriver.start_leases`),
the journal is read again (another process may have started or cancelled the run meanwhile),
the turn order is checked, and history, instructions and tools are taken as they are now,
after the thread's earlier runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from eudaimon.agent._faces import StartingAgent
from eudaimon.agent._input import UserInput
from eudaimon.agent._start import Started, assemble
from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.core.errors import EudaimonError, LeaseHeld
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.leases import HeldLeases
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.queued import QueuedBehind, run_ahead


async def begin_queued(
    agent: StartingAgent,
    runtime: AgentRuntime,
    state: RunState,
    *,
    wait: bool,
    deps: Any,
    cancel: CancellationToken | None,
) -> Started:
    """The queued run's journal with its `run_started` recorded, holding its thread's lease (and
    its own, when both were free); or, when it is no longer queued, its journal as it stands (the
    leases then already given back).

    A `cancel` that fires while the run waits for its thread cancels it there and then.

    Raises:
        QueuedBehind: another run of the thread must go first.
        LeaseHeld: `wait=False` and the thread (or the run) is busy.
    """
    store = agent.store
    taken = await _take(runtime.start_leases(state.run_id, state.thread_id), wait, cancel)
    if taken is None:
        assert cancel is not None
        await _cancel(agent, state.run_id, cancel)
        return Started(await runtime.reopen(state.run_id, deps), None)
    leases = taken
    try:
        now = await load_state(store, state.run_id)
        if now.status is Status.QUEUED and cancel is not None and cancel.is_cancelled:
            if leases.run is not None:  # `cancel` journals under the run's lease
                await leases.run.release()
                leases = replace(leases, run=None)
            await _cancel(agent, state.run_id, cancel)
            now = await load_state(store, state.run_id)
        if now.status is not Status.QUEUED:
            await leases.release()
            return Started(await runtime.reopen(state.run_id, deps), await runtime.resumed_tools(now))
        ahead = await run_ahead(store, now)
        if ahead is not None:
            raise QueuedBehind(now.run_id, ahead, now.thread_id or "")
        records, config = await runtime.fresh_tools()
        journal = await assemble(
            agent,
            runtime,
            UserInput(now.input),
            run_id=now.run_id,
            thread=now.thread_id,
            memory_thread=now.memory_thread,
            history_given=None,
            deps=deps,
            model_settings=None,
            tools=records,
            queued=now,
        )
        journal.deps = deps
    except BaseException:
        await leases.release()
        raise
    return Started(journal, config, leases)


async def _take(leases: HeldLeases, wait: bool, cancel: CancellationToken | None) -> HeldLeases | None:
    """`leases` taken: the run's own with its thread's in one round trip when both are free (a
    drainer starts its thread's earliest run once the one before gave the thread up), as a
    prompt does. When one is held elsewhere, only the thread's is waited for and the run's is
    left to its driver: holding a queued run's own lease while waiting would keep another
    process's `cancel` from journaling, and two processes starting the run would each hold what
    the other waits for. The leases held, or None (holding none) if `cancel` fired first."""
    if leases.thread is None:
        return leases  # no thread, no turn: the driver takes the run's lease
    if leases.run is not None:
        try:
            await leases.acquire(wait=False)
        except LeaseHeld:
            if not wait:
                raise
            leases = replace(leases, run=None)
        else:
            return leases
    return leases if await _acquire_unless_cancelled(leases, wait, cancel) else None


async def _acquire_unless_cancelled(leases: HeldLeases, wait: bool, cancel: CancellationToken | None) -> bool:
    """Take the leases; False (holding none) if `cancel` fired first."""
    if cancel is None or not wait:
        await leases.acquire(wait=wait)
        return True
    taking = asyncio.ensure_future(leases.acquire(wait=True))
    cancelled = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({taking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancelled.cancel()
        if not taking.done():
            taking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await taking
    if taking.cancelled():
        await leases.release()
        for keeper in leases.keepers:
            await keeper.store.release_lease(keeper.name, keeper.owner)  # granted as it was cancelled?
        return False
    taking.result()
    return True


async def _cancel(agent: StartingAgent, run_id: str, cancel: CancellationToken) -> None:
    """Journal the cancellation of a run that never started (or, if a process is starting it
    right now, leave the request for that process to journal)."""
    with contextlib.suppress(EudaimonError):  # it ended meanwhile
        await operations.cancel(agent.store, run_id, reason=cancel.reason or "cancelled", by=cancel.by)
