"""The server's timer sweep: every `interval_s` (a second by default) it fires the approval
deadlines and durable waits of every run in its store that fell due (`runtime.process.timers`), and
drives on those of its own agents that can go on.

Any number of servers may sweep one store: each deadline is journaled by exactly one of them (the
journal's sequence decides), and a run fired by a server that does not serve its agent is picked
up by the recovery sweep of one that does (it is `running` again).
"""

from __future__ import annotations

import asyncio
import logging
import math

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.state import Status
from eudaimon.runtime.process import timers
from eudaimon.server.context import ServerContext

logger = logging.getLogger("eudaimon.server")
TIMER_INTERVAL_S = 1.0
"""How often a server looks for deadlines and wakes due: the most a firing is late, plus its work."""
MIN_INTERVAL_S, MAX_INTERVAL_S = 0.05, 3600.0
"""The intervals a server accepts: below 50 ms the sweeps' queries load the store for nothing;
above an hour a deadline or a schedule slot fires that much late."""


def checked_interval(name: str, seconds: float) -> float:
    """`seconds` if it is a sweep interval a server can keep, else a `ConfigurationError` naming
    `name` (the setting or flag) and the range."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not math.isfinite(seconds):
        raise ConfigurationError(f"{name} must be a number of seconds, got {seconds!r}")
    if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
        raise ConfigurationError(
            f"{name} must be from {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g} seconds, got {seconds:g}: it is how "
            "often the server fires deadlines, durable waits and schedule slots, so the most each is late"
        )
    return float(seconds)


async def sweep(ctx: ServerContext) -> list[timers.Fired]:
    """Fire what is due; drive on the runs of agents served here that can go on."""
    fired = await timers.fire_due(ctx.store)
    for done in fired:
        agent = ctx.agents.get(done.state.agent)
        if agent is not None and done.state.status is Status.RUNNING and not ctx.runner.is_driving(done.run_id):
            ctx.runner.resume(agent, done.run_id, wait=False)
    return fired


async def fire_forever(ctx: ServerContext, interval_s: float = TIMER_INTERVAL_S) -> None:
    while True:
        try:
            fired = await sweep(ctx)
            if fired:
                logger.info("fired deadlines or wakes in %d run(s)", len(fired))
        except Exception:
            logger.exception("the timer sweep failed; trying again in %.1fs", interval_s)
        await asyncio.sleep(interval_s)
