"""A server that crashes loses no run: it resumes its agents' runs whose driver is gone.

On start, and then every `interval_s`, the server looks for runs of the agents it serves that
are `running` or `queued` (not ended, not waiting for a human) and that it does not drive
itself, and resumes each with `wait=False`: a run whose lease is live belongs to another
process and is left alone (looked at again next sweep); one whose lease lapsed (its driver
crashed) is taken over under the recovery rules of DESIGN §4, by the same loop as any resume.

The runs are found in the store's run index (one query on its status), not by folding every
run not yet ended: a store with thousands of runs waiting for approval costs a sweep nothing
more. Queued runs come oldest first and are handed to their thread's queue, which starts them in
turn (`server.queueing`). A fork made not to start waits for a person's resume.

A run an engine drives (a Temporal fleet) can lose its driver while it waits for a person: an
operator terminates its workflow. Each sweep first asks every engine of the served agents what
it closed since the previous look (`Engine.record_closed`: one query to the engine, not one per
waiting run; the store is read only when something closed), and those runs not ended are
journaled as failed, so that the inspector and the API no longer show them waiting for an
approval nothing would act on.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.errors import EudaimonError
from eudaimon.core.run_index import RunRow, sortable
from eudaimon.core.state import RunState
from eudaimon.runtime.process.engines import Engine
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server.context import ServerContext
from eudaimon.stores import index

logger = logging.getLogger("eudaimon.server")
recovery_log = logging.getLogger("eudaimon.recovery")
"""Takeovers and recoveries, one readable line each (shown at INFO by `eudaimon serve`)."""
_ALL = 1_000_000_000
RECOVERED = ("running", "queued")
"""The statuses a run needs a driver in: not ended, not waiting for a human."""
LOOK_BACK = timedelta(minutes=2)
"""How far before its previous look a sweep asks engines what they closed: an engine's listing
lags its workflows (Temporal's visibility, seconds), and clocks differ a little."""


async def sweep(ctx: ServerContext, told: set[str] | None = None) -> list[str]:
    """Resume the runs that need a driver; return their ids. A queued run is logged once (in
    `told`) when this server hands it to its queue; a takeover is logged by the driver that
    takes over (`runtime.process.takeover`), once it holds the lease."""
    resumed: list[str] = []
    for row in await runs_to_recover(ctx):
        agent = ctx.agents.get(row.agent)
        if agent is None or ctx.runner.is_driving(row.run_id):
            continue
        if row.status == "queued":  # journaled, never started: its thread's queue starts it in turn
            ctx.lines.poke(row.agent, row.run_id, row.thread_id)
            if told is not None and row.run_id not in told:
                told.add(row.run_id)
                recovery_log.info(
                    "recovering queued run %s (agent %s, thread %s), queued at %s",
                    row.run_id,
                    row.agent,
                    row.thread_id or "-",
                    row.created_at,
                )
            continue
        if row.parent_run_id is not None and await _held(ctx, row.run_id):
            continue
        ctx.runner.resume(agent, row.run_id, wait=False)
        resumed.append(row.run_id)
    return resumed


async def _held(ctx: ServerContext, run_id: str) -> bool:
    """A fork made not to start that nobody has resumed yet: it waits for a person. Only runs
    with a parent are read to tell, so a sweep folds no other journal."""
    try:
        state: RunState = await load_state(ctx.store, run_id)
    except EudaimonError as exc:
        logger.warning("cannot read run %s to recover it: %s", run_id, exc)
        return True
    return state.parent is not None and state.parent.held and state.next_seq == state.parent.seq + 1


async def runs_to_recover(ctx: ServerContext) -> list[RunRow]:
    """The runs of served agents the index says are running or queued: running ones first
    (they were driven before), then queued ones oldest first."""
    query = index.RunQuery(limit=_ALL, statuses=RECOVERED)
    rows = [row for row in await index.query_runs(ctx.store, query) if row.agent in ctx.agents]
    running = [row for row in rows if row.status != "queued"]
    queued = sorted(
        (row for row in rows if row.status == "queued"), key=lambda row: (sortable(row.created_at), row.run_id)
    )
    return running + queued


async def record_closed(ctx: ServerContext, looked: dict[str, datetime]) -> list[str]:
    """Journal as failed the runs of served agents, not ended, whose engine closed their
    execution outside the loop since the engine's previous look in `looked` (ever, on the
    first), and note this look there; their ids. An engine that does not answer is asked
    again from its previous look at the next sweep."""
    engines: dict[str, Engine] = {}
    for agent in ctx.agents.values():
        engine = runtime_of(agent).engine
        if engine is not None:
            engines[engine.url] = engine
    recorded: list[str] = []
    for url, engine in engines.items():
        now = datetime.now(UTC)
        previous = looked.get(url)
        try:
            recorded += await engine.record_closed(
                ctx.store, ctx.agents, None if previous is None else previous - LOOK_BACK
            )
        except Exception as exc:
            logger.warning("%s did not say which runs it closed (%s); asking again at the next sweep", url, exc)
            continue
        looked[url] = now
    return recorded


async def recover_forever(ctx: ServerContext, interval_s: float) -> None:
    told: set[str] = set()
    looked: dict[str, datetime] = {}
    while True:
        try:
            for run_id in await record_closed(ctx, looked):
                recovery_log.info("journaled run %s as failed: its engine closed it outside the loop", run_id)
        except Exception:
            logger.exception("looking for runs an engine closed failed; trying again in %.0fs", interval_s)
        try:
            found = await sweep(ctx, told)
            if found:
                logger.info("looking to resume %d run(s) without a live driver: %s", len(found), ", ".join(found[:10]))
        except Exception:
            logger.exception("the recovery sweep failed; trying again in %.0fs", interval_s)
        await asyncio.sleep(interval_s)
