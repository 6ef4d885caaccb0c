"""A run whose workflow Temporal gave up on is journaled as `run_failed`, by whoever sees it first.

A workflow can close outside the loop: terminated by an operator, timed out by an execution
timeout, failed by an error the loop never saw. Its run's journal would then say `running`
(or that it waits for a person) for good, looking exactly like a healthy run. The worker (at a run's start), the caller
(`TemporalEngine`, when its workflow closes under it) and `eudaimon runs list --check` ask
`record_if_gave_up` of each run: when the run has not ended in the journal and its workflow has
closed, `run_failed` is appended, saying how it closed and the workflow's id. Appending is fenced
by `expected_seq`, so two that see it at once record it once.

A server asks every recovery sweep, for runs waiting for a person too, which would cost a
`describe` per waiting run every 30 seconds: instead it asks Temporal's visibility once which
run workflows closed other than by completing since its last look (`closed_since`), and looks
only at those of its runs not ended.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from eudaimon.core.errors import ConcurrencyConflict, RunNotFound
from eudaimon.core.events import FailureKind, RunFailed
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore

WORKFLOW_CLOSED = "WorkflowClosed"
"""`run_failed.exception` for a run whose workflow closed outside the loop."""

_CLOSED = {
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed out",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.COMPLETED: "completed",
}
"""How a workflow may close; any of them with its run not ended in the journal is a give-up."""


async def closed_since(client: Client, workflow_type: str, since: datetime | None) -> set[str]:
    """The ids of `workflow_type` workflows that closed other than by completing (terminated,
    timed out, failed, cancelled) at or after `since`, or that Temporal still lists when None:
    one visibility query, whatever the number of runs waiting. Visibility lags the workflows by
    up to seconds, so a caller looks back past its previous look."""
    query = f"WorkflowType = '{workflow_type}' AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Failed', 'Canceled')"
    if since is not None:
        query += f" AND CloseTime >= '{since.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}'"
    return {execution.id async for execution in client.list_workflows(query)}


async def workflow_closed(client: Client, run_id: str) -> str | None:
    """How the run's workflow closed ("terminated", "timed out", …), None while it runs or
    when there is none."""
    try:
        described = await client.get_workflow_handle(run_id).describe()
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            return None
        raise
    return _CLOSED.get(described.status) if described.status is not None else None


async def record_if_gave_up(client: Client, store: EventStore, run_id: str) -> RunState | None:
    """The run's state, with `run_failed` appended first when its workflow closed while the
    journal says the run goes on. None when the store has no such run."""
    for _ in range(5):
        try:
            state = await load_state(store, run_id)
        except RunNotFound:
            return None
        if state.status.is_terminal or not state.engine.startswith("temporal"):
            return state
        how = await workflow_closed(client, run_id)
        if how is None:
            return state
        journal = RunJournal(store, state, snapshot_every=0)
        journal.record(
            RunFailed(
                error=(
                    f"Temporal {how} the run's workflow (workflow id {run_id}) outside the loop; the journal "
                    f"holds the run up to its last commit: fork it from there (`eudaimon runs fork {run_id} --at "
                    f"{state.next_seq - 1}`) and resume the fork to go on"
                ),
                kind=FailureKind.EXCEPTION,
                exception=WORKFLOW_CLOSED,
            )
        )
        try:
            await journal.flush()
        except ConcurrencyConflict:
            continue  # someone appended meanwhile (maybe this very record): look again
        return journal.state
    return await load_state(store, run_id)
