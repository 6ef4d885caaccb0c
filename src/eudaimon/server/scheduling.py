"""`eudaimon serve` fires the schedules of the agents it serves (`runtime.process.schedules`).

Every `interval_s` the server reads the schedules from the store and, for each one not paused
whose agent it serves, the slots due since the last one fired. A slot is started by journaling
the run `slot_run_id(schedule, slot)` as queued, as a start over HTTP is: when several servers
share a store, each may try the same slot, and the journal's compare-and-append lets only the
first start land (the others find the id taken). So each slot runs once whichever servers are
up, and a server killed mid-tick leaves nothing a survivor would not redo exactly.

A slot older than `grace_s` when found passed while no server was up to fire it: with
`catch_up="none"` it is skipped, with `"latest"` the latest such slot runs (once), the rest are
skipped — what an operator wants after an outage, not a burst of the mornings missed.

A schedule an engine owns (`Schedule.engine`: a Temporal Schedule) is never fired here: the
engine fires it, and a server firing it too would only race it for the same run ids.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Literal

from eudaimon.core.errors import ConcurrencyConflict, EudaimonError
from eudaimon.runtime.process.schedules import Schedule, Schedules, slot_run_id
from eudaimon.server.context import ServerContext
from eudaimon.server.queueing import submit

logger = logging.getLogger("eudaimon.server")

CatchUp = Literal["latest", "none"]
CATCH_UPS: tuple[CatchUp, ...] = ("latest", "none")


async def fire_due(
    ctx: ServerContext, *, catch_up: CatchUp = "latest", grace_s: float = 60.0, now: datetime | None = None
) -> list[str]:
    """Start the runs of the slots due now; return the ids of those this call journaled."""
    now = now or datetime.now(UTC)
    schedules = Schedules(ctx.store)
    started: list[str] = []
    for schedule in await schedules.list():
        if schedule.paused or schedule.engine or schedule.agent not in ctx.agents:
            continue  # an engine's schedule (a Temporal Schedule) is fired by the engine, never here too
        slots = schedule.due(now)
        if not slots:
            continue
        fire = [slot for slot in slots if (now - slot).total_seconds() <= grace_s]
        if not fire and catch_up == "latest":
            fire = [slots[-1]]
        run_id = None
        for slot in fire:
            run_id = slot_run_id(schedule.id, slot)
            if await _start(ctx, schedule, run_id):
                started.append(run_id)
        await schedules.fired(schedule, slots[-1], run_id)
    return started


async def _start(ctx: ServerContext, schedule: Schedule, run_id: str) -> bool:
    agent = ctx.agents[schedule.agent]
    try:
        await submit(
            ctx, agent, schedule.input, run_id=run_id, thread_id=schedule.thread_id, principal=f"schedule:{schedule.id}"
        )
    except ConcurrencyConflict:
        return False  # another server started this slot first
    except EudaimonError as exc:  # a guardrail refused the input, a bad thread: the slot is noted, not retried
        logger.warning("schedule %s could not start run %s: %s", schedule.id, run_id, exc)
        return False
    return True


async def fire_forever(ctx: ServerContext, *, interval_s: float, catch_up: CatchUp, grace_s: float) -> None:
    """`fire_due` every `interval_s` until cancelled; a failed tick is logged and retried."""
    while True:
        try:
            await fire_due(ctx, catch_up=catch_up, grace_s=grace_s)
        except Exception:  # a store that is briefly away must not stop the firing for good
            logger.exception("firing schedules failed; trying again in %.1f s", interval_s)
        await asyncio.sleep(interval_s)
