"""A run's journal as an A2A task: the one mapping between eudaimon's fold and A2A's `Task`.

Task id = run id, `contextId` = thread id. States follow the run's `Status`: `running` is
`working`; a call waiting for approval (or an operator's reconciliation) is `input-required`,
with a status message saying which calls wait and how to answer; `completed`, `failed`
(`budget_exceeded` too) and `cancelled` are the terminal states. A run journaled but not
begun (`queued`: its thread is busy with an earlier run) is `submitted`. The answer is an artifact:
its text as a text part and, for an agent with an `output_type`, the typed output as a data part.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import (
    Artifact,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import decode_page_token, encode_page_token, validate_page_size
from google.protobuf.timestamp_pb2 import Timestamp

from eudaimon.core.edits import edit_text
from eudaimon.core.messages import Role as MessageRole
from eudaimon.core.state import Edit, RunState, Status
from eudaimon.server.ids import id_problem
from eudaimon.server.views import spent_dict
from eudaimon.stores.base import EventStore

STATES: dict[Status, TaskState] = {
    Status.QUEUED: TaskState.TASK_STATE_SUBMITTED,
    Status.RUNNING: TaskState.TASK_STATE_WORKING,
    Status.AWAITING_APPROVAL: TaskState.TASK_STATE_INPUT_REQUIRED,
    Status.AWAITING_RECONCILIATION: TaskState.TASK_STATE_INPUT_REQUIRED,
    Status.WAITING: TaskState.TASK_STATE_WORKING,  # it goes on by itself at its wake time
    Status.COMPLETED: TaskState.TASK_STATE_COMPLETED,
    Status.FAILED: TaskState.TASK_STATE_FAILED,
    Status.BUDGET_EXCEEDED: TaskState.TASK_STATE_FAILED,
    Status.CANCELLED: TaskState.TASK_STATE_CANCELED,
}
TERMINAL = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED})


def task_state(status: Status) -> TaskState:
    """The A2A state of a run status; a status this mapping does not know (from a newer
    journal) is `submitted`, as a run accepted but not begun."""
    return STATES.get(status, TaskState.TASK_STATE_SUBMITTED)


ANSWER_ARTIFACT = "answer"
"""The artifact id (and name) of a completed task's answer: one per task, stable across reads."""


def refuse_bad_context(context_id: str) -> None:
    """`InvalidParamsError` for a `contextId` the API would refuse as a thread id (NUL, control,
    bidi or format characters, over 256 characters): it becomes the run's thread id."""
    problem = id_problem("contextId", context_id)
    if problem is not None:
        raise InvalidParamsError(f"{problem} (it becomes the eudaimon thread id)")


def context_of(state: RunState) -> str:
    """The task's `contextId`: the run's thread, or the run itself for a run in no thread."""
    return state.thread_id or state.run_id


def status_of(state: RunState, at: datetime | None = None) -> TaskStatus:
    """The task status the run's state stands for, with a message when someone must act or read."""
    status = TaskStatus(state=task_state(state.status))
    if at is not None:
        stamp = Timestamp()
        stamp.FromDatetime(at)
        status.timestamp.CopyFrom(stamp)
    text = _status_text(state)
    if text is not None:
        status.message.CopyFrom(
            Message(
                message_id=f"{state.run_id}:status:{state.next_seq - 1}",
                role=Role.ROLE_AGENT,
                task_id=state.run_id,
                context_id=context_of(state),
                parts=[new_text_part(text)],
            )
        )
    return status


def _status_text(state: RunState) -> str | None:
    if state.status is Status.AWAITING_APPROVAL:
        calls = "; ".join(
            f"{c.id}: {c.name}({json.dumps(c.arguments, default=str)})" for c in state.awaiting_approval()
        )
        return (
            f"waiting for approval of {calls or 'a call of a child run'}. An operator answers with a message "
            'on this task carrying a data part {"approved": true|false, "call_id": "…"} (or POST '
            f"/v1/runs/{state.run_id}/approvals/CALL)"
        )
    if state.status is Status.AWAITING_RECONCILIATION:
        calls = ", ".join(f"{c.id} ({c.name})" for c in state.unknown_outcomes()) or "a child run's"
        return f"the outcome of {calls} is unknown; an operator settles it with POST /v1/runs/{state.run_id}/reconcile/CALL"
    if state.status in (Status.FAILED, Status.BUDGET_EXCEEDED, Status.CANCELLED):
        return state.error or state.status.value
    return None


def artifacts_of(state: RunState) -> list[Artifact]:
    """A completed run's answer: its text, and its typed output as data when it has one."""
    if state.status is not Status.COMPLETED:
        return []
    parts = [new_text_part(state.output or "")]
    if state.structured_output is not None:
        parts.append(new_data_part(state.structured_output))
    return [Artifact(artifact_id=ANSWER_ARTIFACT, name=ANSWER_ARTIFACT, parts=parts)]


def history_of(state: RunState) -> list[Message]:
    """The conversation as A2A messages: what users said and what the agent answered in text."""
    shown: list[Message] = []
    for n, message in enumerate(state.messages):
        if message.role not in (MessageRole.USER, MessageRole.ASSISTANT) or not message.content:
            continue
        shown.append(
            Message(
                message_id=message.id or f"{state.run_id}:message:{n}",
                role=Role.ROLE_USER if message.role is MessageRole.USER else Role.ROLE_AGENT,
                task_id=state.run_id,
                context_id=context_of(state),
                parts=[new_text_part(message.content)],
            )
        )
    return shown


USAGE_KEY = "eudaimon.usage"
"""The task metadata key under which an eudaimon server reports what the task's run spent:
`input_tokens`, `output_tokens`, `cached_tokens`, and `cost_usd` when its calls were priced.
An eudaimon caller (`A2AAgent`) adds them to its own run, so its budget sees them."""


def usage_of(state: RunState) -> dict[str, Any]:
    """What the run spent, as the task metadata `USAGE_KEY` holds it."""
    return {USAGE_KEY: spent_dict(state)}


def task_of(state: RunState, at: datetime | None = None) -> Task:
    """The whole task as `tasks/get` answers it, with what its run spent in the metadata;
    `metadata.edits` says who changed which call's arguments, from what to what, before it ran."""
    task = Task(
        id=state.run_id,
        context_id=context_of(state),
        status=status_of(state, at),
        artifacts=artifacts_of(state),
        history=history_of(state),
    )
    if state.edits:
        task.metadata.update({"edits": [edit_of(edit) for edit in state.edits]})
    task.metadata.update(usage_of(state))
    return task


def edit_of(edit: Edit) -> dict[str, Any]:
    """An approver's edit as a task's metadata shows it (JSON round trip: protobuf's Struct)."""
    shown = {
        "call_id": edit.call_id,
        "tool": edit.tool,
        "by": edit.by,
        "original_arguments": edit.original,
        "arguments": edit.arguments,
        "edit": edit_text(edit.original, edit.arguments, 2000),
    }
    loaded: dict[str, Any] = json.loads(json.dumps(shown, default=str))
    return loaded


class JournalTaskStore(TaskStore):
    """The SDK's task store interface over the journal: a task is read from its run's events.

    Nothing is ever saved here: the runs themselves write the journal, so a task survives
    whatever the process does, and `save` or `delete` from the SDK's side is refused.
    """

    def __init__(self, store: EventStore, agent: str) -> None:
        self.store = store
        self.agent = agent

    async def load(self, task_id: str) -> tuple[RunState, datetime] | None:
        """The run's state and the time of its last event, if it is a run of this agent."""
        events = await self.store.load(task_id)
        state = RunState.from_events(events)
        if state is None or state.agent != self.agent:
            return None
        return state, events[-1].at

    async def get(self, task_id: str, context: ServerCallContext | None = None) -> Task | None:
        found = await self.load(task_id)
        return None if found is None else task_of(*found)

    async def save(self, task: Task, context: ServerCallContext | None = None) -> None:
        raise NotImplementedError("A2A tasks are eudaimon runs: their journal is written by the runs, not saved")

    async def delete(self, task_id: str, context: ServerCallContext | None = None) -> None:
        raise NotImplementedError("A2A tasks are eudaimon runs, which are kept; `eudaimon runs gc` removes old ones")

    async def list(self, params: ListTasksRequest, context: ServerCallContext | None = None) -> ListTasksResponse:
        """This agent's tasks, most recently updated first (of `contextId` when given), a page at
        a time: `nextPageToken` names the last task of the page, the next page starts after it."""
        if params.HasField("page_size"):
            validate_page_size(params.page_size)
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        if params.context_id:
            refuse_bad_context(params.context_id)
        summaries = await self.store.list_runs(limit=1_000_000_000, thread_id=params.context_id or None)
        summaries = [s for s in summaries if s.agent == self.agent]
        summaries.sort(key=lambda s: (s.updated_at, s.run_id), reverse=True)
        start = 0
        if params.page_token:
            try:
                after = decode_page_token(params.page_token)
            except ValueError:
                after = ""
            ids = [s.run_id for s in summaries]
            if after not in ids:
                raise InvalidParamsError("pageToken is not one this agent gave; pass nextPageToken from the last page")
            start = ids.index(after) + 1
        page = summaries[start : start + size]
        tasks: list[Task] = []
        for summary in page:
            found = await self.load(summary.run_id)
            if found is not None:
                tasks.append(task_of(*found))
        more = start + size < len(summaries)
        return ListTasksResponse(
            tasks=tasks,
            page_size=size,
            total_size=len(summaries),
            next_page_token=encode_page_token(page[-1].run_id) if more and page else "",
        )
