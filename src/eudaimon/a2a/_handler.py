"""The A2A request handler of one served agent: the SDK's `RequestHandler`, answered from the journal.

The SDK's own handler keeps its tasks' live state in memory; ours reads every answer from the
run's journal (through `JournalTaskStore`) and follows runs through the server's hub, so
`GetTask`, `SubscribeToTask` and `CancelTask` answer the same after the server was killed and
restarted (its recovery sweep resumes the run). A message is a run: its id is derived from the
principal, the agent and the `messageId`, so the same message sent again (a client that
crashed and resends) is recognised and answered with the task it started, never a second run.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
from collections.abc import AsyncGenerator, AsyncIterator
from datetime import datetime
from typing import Any

from a2a.helpers import get_data_parts, get_message_text
from a2a.server.context import ServerCallContext
from a2a.server.events import Event as A2AEvent
from a2a.server.request_handlers import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.task import apply_history_length, validate_history_length
from starlette.exceptions import HTTPException

from eudaimon.a2a._tasks import (
    TERMINAL,
    JournalTaskStore,
    artifacts_of,
    refuse_bad_context,
    status_of,
    task_of,
    task_state,
    usage_of,
)
from eudaimon.agent import Agent
from eudaimon.core.errors import ConcurrencyConflict, EudaimonError, GuardrailBlocked
from eudaimon.core.events import Event
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process import operations
from eudaimon.server.auth import Principal
from eudaimon.server.context import ServerContext
from eudaimon.server.following import journal_batches, settled
from eudaimon.server.queueing import submit

PRINCIPAL = "eudaimon.principal"
"""Where the request's principal (from its API key) sits in the `ServerCallContext`'s state."""
CANCEL_WAIT_S = 10.0


def message_run_id(principal: Principal, agent: str, message_id: str) -> str:
    """The run an A2A message starts: the same message id (from the same principal, to the same
    agent) always names the same run, in any process and after any crash."""
    return "a2a_" + hashlib.sha256(f"{principal.name}\0{agent}\0{message_id}".encode()).hexdigest()[:32]


class JournalRequestHandler(RequestHandler):
    """`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask` and
    `SubscribeToTask` for one agent; push notifications and the extended card are not offered."""

    def __init__(self, ctx: ServerContext, agent: Agent[Any, Any]) -> None:
        self.ctx = ctx
        self.agent = agent
        self.tasks = JournalTaskStore(ctx.store, agent.name)

    # -- reading ------------------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        validate_history_length(params)
        task = await self.tasks.get(params.id, context)
        if task is None:
            raise TaskNotFoundError(f"agent {self.agent.name!r} has no task {params.id!r}")
        return apply_history_length(task, params)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self.tasks.list(params, context)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        found = await self.tasks.load(params.id)
        if found is None:
            raise TaskNotFoundError(f"agent {self.agent.name!r} has no task {params.id!r}")
        state, at = found
        task = task_of(state, at)
        if task.status.state in TERMINAL:
            raise UnsupportedOperationError(f"task {params.id} has ended ({state.status.value}); read it with GetTask")
        yield task
        async for update in self._updates(params.id, state, task):
            yield update

    # -- acting -------------------------------------------------------------------------------

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        run_id = await self._accept(params.message, _operator(context))
        if params.configuration.return_immediately:
            return apply_history_length(task_of(*await self._journaled(run_id)), params.configuration)
        latest: tuple[RunState, list[Event]] | None = None
        async for latest in journal_batches(self.ctx, run_id, None):
            if settled(latest[0]):
                break
        assert latest is not None
        state, events = latest
        return apply_history_length(task_of(state, events[-1].at), params.configuration)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        run_id = await self._accept(params.message, _operator(context))
        state, at = await self._journaled(run_id)
        first = task_of(state, at)
        yield first
        async for update in self._updates(run_id, state, first):
            yield update

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        principal = _operator(context)
        found = await self.tasks.load(params.id)
        if found is None:
            raise TaskNotFoundError(f"agent {self.agent.name!r} has no task {params.id!r}")
        state, _ = found
        if state.status.is_terminal:
            raise TaskNotCancelableError(f"task {params.id} has ended ({state.status.value})")
        reason = "cancelled over A2A"
        # A queued run has no driver yet: the cancel is journaled here, unless its turn came
        # meanwhile and the driver that took its lease journals the request at its next step.
        if self.ctx.runner.cancel(params.id, reason, principal.name) or (
            await operations.cancel(self.ctx.store, params.id, reason=reason, by=principal.name) is None
        ):
            task = self.ctx.runner.task(params.id)
            if task is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(task), CANCEL_WAIT_S)
        return await self.tasks.get(params.id, context)

    async def _accept(self, message: Message, principal: Principal) -> str:
        """Journal the message's run (`run_queued`, before any answer: its thread's queue starts it
        in its turn), find the one it started before, or apply its answer to a task waiting for
        input; return the run id."""
        if message.task_id:
            return await self._answer(message, principal)
        text = get_message_text(message)
        if not text.strip():
            raise InvalidParamsError("the message has no text part; say what the agent should do")
        run_id = message_run_id(principal, self.agent.name, message.message_id)
        existing = await self.ctx.store.load(run_id)
        if not existing:
            if message.context_id:
                refuse_bad_context(message.context_id)
            thread_id = message.context_id or run_id
            request = {"input": text, "thread_id": thread_id, "principal": principal.name}
            try:
                await submit(
                    self.ctx,
                    self.agent,
                    text,
                    run_id=run_id,
                    thread_id=thread_id,
                    principal=principal.name,
                    request=request,
                )
            except GuardrailBlocked as exc:
                raise InvalidParamsError(f"the message was refused by an input guardrail: {exc}") from None
            except ConcurrencyConflict:  # the same message, sent again at once: its run
                existing = await self.ctx.store.load(run_id)
            else:
                return run_id
        state = RunState.from_events(existing)
        assert state is not None
        if state.agent != self.agent.name:
            raise InvalidParamsError(f"message id {message.message_id!r} started a run of another agent")
        if state.status is Status.QUEUED:  # after a restart, before the recovery sweep got to it
            self.ctx.lines.poke(self.agent.name, run_id, state.thread_id)
        elif state.status is Status.RUNNING and not self.ctx.runner.is_driving(run_id):
            self.ctx.runner.resume(self.agent, run_id, wait=False)  # after a crash: go on now
        return run_id

    async def _answer(self, message: Message, principal: Principal) -> str:
        """A message on a task waiting for approval: `{"approved": bool, "call_id"?, "note"?}`."""
        found = await self.tasks.load(message.task_id)
        if found is None:
            raise TaskNotFoundError(f"agent {self.agent.name!r} has no task {message.task_id!r}")
        state, _ = found
        if state.status is not Status.AWAITING_APPROVAL:
            raise InvalidParamsError(
                f"task {state.run_id} is {state.status.value}: a message on an existing task answers an "
                "approval only; send a new message (without taskId) to ask something new"
            )
        decisions = [d for d in get_data_parts(message.parts) if isinstance(d, dict) and "approved" in d]
        if not decisions or not all(isinstance(d["approved"], bool) for d in decisions):
            raise InvalidParamsError(
                '"approved" must be a JSON boolean; answer with a data part {"approved": true|false, "call_id": "…", '
                '"note": "…"}; nothing was recorded'
            )
        waiting = {c.id for c in state.awaiting_approval()}
        for decision in decisions:
            call_id = decision.get("call_id")
            calls = waiting if call_id is None else {str(call_id)}
            unknown = calls - waiting
            if unknown:
                raise InvalidParamsError(f"no call {', '.join(sorted(unknown))} waits for approval in {state.run_id}")
            note = decision.get("note")
            for call in sorted(calls):
                try:
                    state = await operations.approve(
                        self.ctx.store,
                        state.run_id,
                        call,
                        decision["approved"],
                        by=principal.name,
                        note=None if note is None else str(note),
                    )
                except EudaimonError as exc:
                    raise InvalidParamsError(str(exc)) from exc
                waiting.discard(call)
        if state.status is Status.RUNNING:
            self.ctx.runner.resume(self.agent, state.run_id)
        return state.run_id

    async def _journaled(self, run_id: str) -> tuple[RunState, datetime]:
        """The state of a run `_accept` found or journaled (as `run_queued`, so it is never missing)."""
        found = await self.tasks.load(run_id)
        if found is None:
            raise TaskNotFoundError(f"agent {self.agent.name!r} has no task {run_id!r}")
        return found

    # -- following ----------------------------------------------------------------------------

    async def _updates(self, run_id: str, state: RunState | None, shown: Task) -> AsyncIterator[A2AEvent]:
        """Status updates each time the task's status changes, the answer as an artifact before
        the `completed` status; ends when the task ends or waits for input.

        The journal is folded event by event here, so a run that went from `running` to its end
        within one batch the store returned still shows `working` first, as it was."""
        last = (shown.status.state, shown.status.message.SerializeToString())
        context_id = shown.context_id
        mine = copy.deepcopy(state) if state is not None else RunState(run_id=run_id)
        async for current, events in journal_batches(self.ctx, run_id, state):
            for n, event in enumerate(events):
                mine.apply(event)
                if n < len(events) - 1 and (task_state(mine.status) == last[0] or mine.status.is_paused):
                    continue  # in the middle of a batch only a change to working or an end shows
                status = status_of(mine, event.at)
                now = (status.state, status.message.SerializeToString())
                if now == last:
                    continue
                last = now
                for artifact in artifacts_of(mine):
                    yield TaskArtifactUpdateEvent(
                        task_id=run_id, context_id=context_id, artifact=artifact, last_chunk=True
                    )
                update = TaskStatusUpdateEvent(task_id=run_id, context_id=context_id, status=status)
                if status.state in TERMINAL:
                    update.metadata.update(usage_of(mine))  # what the run spent, for the caller's bill
                yield update
            assert mine.next_seq == current.next_seq

    # -- not offered --------------------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError


def _operator(context: ServerCallContext) -> Principal:
    """The request's principal, who must hold an operator key to start, answer or cancel a task."""
    principal: Principal = context.state[PRINCIPAL]
    if not principal.may_operate:
        raise HTTPException(
            403,
            f"{principal.name} is a {principal.role.value}; sending messages or cancelling tasks needs an operator key",
        )
    return principal
