"""`ScheduledWorkflow`: what a Temporal Schedule of eudaimon's starts at each slot — a small
starter, not the run itself.

Why a starter: Temporal names the workflow a schedule starts `{action id}-{scheduled time}`, so
a schedule cannot start a run's workflow under the run id eudaimon derives from the schedule and
the slot (`slot_run_id`), which is what makes a second start of a slot find the first. And a
run's workflow drives a journal that already holds `run_started`, which the caller's side writes
(input guardrails, the thread's turn). So the schedule starts this workflow (one per slot, any
id), which reads the slot Temporal scheduled it for (the `TemporalScheduledStartTime` search
attribute Temporal sets) and asks one activity, `eudaimon.start_scheduled`
(`_scheduled_start`), to start the run exactly as a server starts a queued run: `run_queued`
under the derived id (a compare-and-append: a second start of the slot, by a retried activity or
a re-fired action, finds the first), then the run's own workflow, id = run id, never twice
(`TemporalEngine.start`: reuse of a closed id refused). The journal shows the run like any other;
Temporal's history shows the starter beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey

SCHEDULED = "eudaimon.scheduled"
START = "eudaimon.start_scheduled"
SCHEDULED_AT = SearchAttributeKey.for_datetime("TemporalScheduledStartTime")
"""Set by Temporal on every workflow a schedule starts: the slot (or the trigger's time)."""


@dataclass(frozen=True, slots=True)
class ScheduledInput:
    """The schedule's id (its record in the store says the rest); `slot` filled by the starter."""

    schedule_id: str
    slot: str = ""


@workflow.defn(name=SCHEDULED)
class ScheduledWorkflow:
    @workflow.run
    async def run(self, sent: ScheduledInput) -> str:
        """Start the slot's run; return its id ("" when the slot was skipped)."""
        info = workflow.info()
        slot = info.typed_search_attributes.get(SCHEDULED_AT) or info.workflow_start_time
        result: str = await workflow.execute_activity(
            START,
            ScheduledInput(sent.schedule_id, slot.isoformat()),
            start_to_close_timeout=timedelta(minutes=2),
            heartbeat_timeout=timedelta(seconds=30),
            # A thread's turn not come yet, a store away: tried again; a refusal is not retried.
            retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=30), non_retryable_error_types=["Refused"]),
            result_type=str,
        )
        return result
