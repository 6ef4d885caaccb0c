"""A workflow that only folds a journal and asks `next_step`: core, imported in the sandbox."""

from __future__ import annotations

from temporalio import workflow

from eudaimon.core import RunState
from eudaimon.core.codec import event_from_json, state_to_json
from eudaimon.core.decide import DecideConfig, next_step
from eudaimon.runtime.loop.clock import SYSTEM_CLOCK


@workflow.defn(name="core-probe")
class CoreProbe:
    @workflow.run
    async def run(self, rows: list[str]) -> dict[str, str]:
        states = [RunState.from_events([event_from_json(r) for r in rows[: n + 1]]) for n in range(len(rows))]
        last = states[-1]
        assert last is not None
        step = next_step(last, DecideConfig())
        return {
            "status": last.status.value,
            "step": type(step).__name__,
            "state": state_to_json(last),
            "run_state_id": str(id(RunState)),
        }


@workflow.defn(name="clock-probe")
class ClockProbe:
    """Asks eudaimon's system clock for the time: what workflow code must never do."""

    @workflow.run
    async def run(self) -> str:
        return SYSTEM_CLOCK.now().isoformat()
