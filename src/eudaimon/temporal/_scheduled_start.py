"""The activity a Temporal Schedule's starter runs (`_scheduled`): start the run of one slot.

It runs on a worker of the agent's queue, with the worker's own agent, which must be built
with the fleet's `TemporalEngine` (as the application's is: `eudaimon worker --agent` names the
same module). An activity runs outside Temporal's workflow sandbox, so this holds on a worker
with `sandboxed=True` too: the worker hands its agent to the activity (`ScheduledStarts(store,
agent)`) whether or not its workflows use that object.

For the slot it reads the schedule's record in the store (removed or paused: no
run), skips a slot missed as `catch_up` says (`Schedule.skips`, the same rule as a server's),
runs the input guardrails, journals `run_queued` under `slot_run_id(schedule, slot)` — a
compare-and-append, so a second start of the slot finds the first — and has the agent start it
(`agent.resume`, as a server's queue does: `run_started` at seq 1, then the run's workflow, id =
run id, never started twice). It returns once that workflow exists, leaving the run to it: the
activity never holds a slot of the worker for the run's length.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.client import WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from eudaimon.agent import Agent
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, GuardrailBlocked
from eudaimon.core.events import RunQueued
from eudaimon.extensions.guardrails import run_input_guardrails
from eudaimon.runtime.process.queued import enqueue
from eudaimon.runtime.process.schedules import Schedules, UnknownSchedule, slot_run_id
from eudaimon.stores.base import EventStore
from eudaimon.temporal import _served
from eudaimon.temporal._engine import TemporalEngine
from eudaimon.temporal._scheduled import START, ScheduledInput
from eudaimon.tools import ToolContext

REFUSED = "Refused"
"""The type of the error for a slot that can never start (not retried): no such agent here,
an agent without the fleet's engine, a schedule with deps to give."""
_POLL_S = 0.1


class ScheduledStarts:
    """The `eudaimon.start_scheduled` activity of one worker, on the journal's store."""

    def __init__(self, store: EventStore, agent: Agent[Any, Any] | None = None) -> None:
        self.store = store
        self.agent = agent
        """The worker's agent (activities run outside the sandbox, so even a sandboxed worker's
        serves); without it, the agent the worker registered for its workflows (`_served`)."""

    def all(self) -> list[Callable[..., Any]]:
        return [self.start]

    @activity.defn(name=START)
    async def start(self, sent: ScheduledInput) -> str:
        """Start the slot's run; its id, or "" when the slot runs nothing (removed, paused, missed)."""
        schedules = Schedules(self.store)
        try:
            schedule = await schedules.get(sent.schedule_id)
        except UnknownSchedule:
            return ""  # removed after Temporal fired it
        slot = datetime.fromisoformat(sent.slot).astimezone(UTC)
        if schedule.paused or schedule.skips(slot, datetime.now(UTC)):
            await schedules.fired(schedule, slot, None)
            return ""
        agent = self.agent if self.agent is not None and self.agent.name == schedule.agent else None
        agent = agent if agent is not None else _served.agent_for(schedule.agent)
        engine = runtime_of(agent).engine if agent is not None else None
        if agent is None or not isinstance(engine, TemporalEngine):
            raise ApplicationError(
                f"schedule {schedule.id}: this worker has no agent {schedule.agent!r} built with a TemporalEngine; "
                "serve the application's agent module, built with the fleet's engine (`eudaimon worker --agent MODULE:ATTR`)",
                type=REFUSED,
                non_retryable=True,
            )
        run_id = slot_run_id(schedule.id, slot)
        try:
            text = await run_input_guardrails(
                agent.input_guardrails, schedule.input, ToolContext(run_id, "", "", 0, None, 0)
            )
        except GuardrailBlocked as exc:
            activity.logger.warning(
                "schedule %s: a guardrail refused the input of run %s: %s", schedule.id, run_id, exc
            )
            await schedules.fired(schedule, slot, None)
            return ""
        thread = schedule.thread_id or f"{agent.name}:{run_id}"  # a start without a thread has its own
        queued = RunQueued(
            agent=agent.name, input=text, thread_id=thread, memory_thread=thread, principal=f"schedule:{schedule.id}"
        )
        with contextlib.suppress(ConcurrencyConflict):  # a second start of this slot finds the first
            await enqueue(agent.store, run_id, queued)
        try:
            await _started(agent, engine, run_id)
        except ConfigurationError as exc:  # deps the agent needs, which no schedule gives
            raise ApplicationError(f"schedule {schedule.id}: {exc}", type=REFUSED, non_retryable=True) from exc
        await schedules.fired(schedule, slot, run_id)
        return run_id


async def _started(agent: Any, engine: TemporalEngine, run_id: str) -> None:
    """Have `agent` start the queued run, and return once its workflow exists (or the run had
    ended already). `QueuedBehind` (the thread's turn has not come) fails the attempt, which
    Temporal retries."""
    resuming = asyncio.ensure_future(agent.resume(run_id))
    handle = (await engine.client()).get_workflow_handle(run_id)
    try:
        while True:
            activity.heartbeat()
            if await _exists(handle):
                return  # the run's workflow is started: it drives the run from here
            if resuming.done():
                break
            await asyncio.wait({resuming}, timeout=_POLL_S)
        resuming.result()  # ended without a workflow of its own: it had ended already, or it raises
    finally:
        if not resuming.done():
            resuming.cancel()  # the caller's wait only: the run goes on in its workflow
            with contextlib.suppress(asyncio.CancelledError):
                await resuming


async def _exists(handle: WorkflowHandle[Any, Any]) -> bool:
    try:
        await handle.describe()
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise
        return False
    return True
