"""A run whose workflow Temporal gave up on is journaled as `run_failed`, by whoever sees it first.

A workflow can close outside the loop: terminated by an operator, timed out by an execution
timeout, failed by an error the loop never saw. Its run's journal would then say `running`
(or that it waits for a person) for good, looking exactly like a healthy run. The caller
(`TemporalEngine`, when its workflow closes under it) and `eudaimon runs list --check` ask
`record_if_gave_up` of each run: when the run has not ended in the journal and its workflow has
closed, `run_failed` is appended, saying how it closed and the workflow's id. Appending is fenced
by `expected_seq`, so two that see it at once record it once.

A server asks every recovery sweep, and a worker as it starts, for runs waiting for a person
too, which would cost a `describe` per run not ended (thousands, in a fleet that waits on
people) every 30 seconds, and at every deploy: instead `record_closed` asks Temporal's
visibility once which run workflows closed other than by completing (since the server's last
look; within the namespace's retention, for a worker), and looks only at those of its runs not
ended.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from eudaimon.core.errors import ConcurrencyConflict, RunNotFound
from eudaimon.core.events import FailureKind, RunFailed
from eudaimon.core.run_index import NOT_ENDED
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import index
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


async def record_closed(
    client: Client, workflow_type: str, store: EventStore, agents: Collection[str], since: datetime | None
) -> list[str]:
    """Journal as failed each run of `agents` not ended in `store` whose workflow closed
    outside the loop at or after `since` (`closed_since`: one visibility query; the store is
    read only when it lists any); the ids journaled now."""
    closed = await closed_since(client, workflow_type, since)
    if not closed:
        return []
    rows = await index.query_runs(store, index.RunQuery(limit=1_000_000_000, statuses=NOT_ENDED))
    recorded: list[str] = []
    for run_id in sorted(row.run_id for row in rows if row.run_id in closed and row.agent in agents):
        after = await record_if_gave_up(client, store, run_id)
        if after is not None and after.status.is_terminal:
            recorded.append(run_id)
    return recorded


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
