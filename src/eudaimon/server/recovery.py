"""A server that crashes loses no run: it resumes its agents' runs whose driver is gone.

On start, and then every `interval_s`, the server looks for runs of the agents it serves that
are `running` (not ended, not waiting for a human) and that it does not drive itself, and
resumes each with `wait=False`: a run whose lease is live belongs to another process and is
left alone (looked at again next sweep); one whose lease lapsed (its driver crashed) is taken
over under the recovery rules of DESIGN §4, by the same loop as any resume. Runs still
`queued` (journaled, never started) are handed to their thread's queue, which starts them in
turn (`server.queueing`).
"""

from __future__ import annotations

import asyncio
import logging

from eudaimon.core.errors import EudaimonError
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.operations import load_state
from eudaimon.runtime.queued import is_queued
from eudaimon.server.context import ServerContext

logger = logging.getLogger("eudaimon.server")
_ALL = 1_000_000_000


async def sweep(ctx: ServerContext) -> list[str]:
    """Resume the runs that need a driver; return their ids."""
    resumed: list[str] = []
    for summary in await ctx.store.list_runs(limit=_ALL):
        agent = ctx.agents.get(summary.agent)
        if agent is None or summary.is_finished or ctx.runner.is_driving(summary.run_id):
            continue
        if is_queued(summary):  # journaled, never started: its thread's queue starts it in turn
            ctx.lines.poke(summary.agent, summary.run_id, summary.thread_id)
            continue
        try:
            state = await load_state(ctx.store, summary.run_id)
        except EudaimonError as exc:
            logger.warning("cannot read run %s to recover it: %s", summary.run_id, exc)
            continue
        if state.status is Status.RUNNING and not _held(state):
            ctx.runner.resume(agent, summary.run_id, wait=False)
            resumed.append(summary.run_id)
    return resumed


def _held(state: RunState) -> bool:
    """A fork made not to start that nobody has resumed yet: it waits for a person."""
    return state.parent is not None and state.parent.held and state.next_seq == state.parent.seq + 1


async def recover_forever(ctx: ServerContext, interval_s: float) -> None:
    while True:
        try:
            found = await sweep(ctx)
            if found:
                logger.info("looking to resume %d run(s) without a live driver: %s", len(found), ", ".join(found[:10]))
        except Exception:
            logger.exception("the recovery sweep failed; trying again in %.0fs", interval_s)
        await asyncio.sleep(interval_s)
