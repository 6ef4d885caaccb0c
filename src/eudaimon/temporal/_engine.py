"""`TemporalEngine`: an `Agent` whose runs are driven by a fleet of Temporal workers.

The caller's process does what it does locally up to `run_started` (input guardrails,
memory, the thread's lease), commits it, and starts the run's workflow (id = run id) on the
task queue; workers serving the same agent module drive it. `prompt` returns once the run has
finished or waits for a human, with the same `AgentResponse`, read from the store's journal.

Streaming: `prompt_stream` follows the journal in the store while the workflow runs, and
yields what each committed event says — a model's text as one `TextDelta` per model call, its
tool calls, tool results, usage — then `Done`. Models on a fleet are called without token
streaming, so nothing is lost when a worker dies mid-call: the text a caller sees is exactly
what the journal holds, and a model call interrupted by a lost worker is retried as a new,
journaled attempt.

Deps: `prompt(deps=…)` and `resume(deps=…)` serve what runs in the calling process (input
guardrails, a `system_prompt` function) as locally. Deps that serialize to JSON (a pydantic
model, a dataclass of plain values) also travel with the run's workflow — in Temporal's
history, never the journal — and are rebuilt as the agent's `deps_type` for its tools on any
worker. Live objects (a database pool, a session) cannot travel: the workers bring their own,
`create_worker(..., deps=...)` or `eudaimon worker --deps MODULE:ATTR`, and a run whose deps
stayed behind fails at once, saying so, on a worker that has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, TemporalError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from eudaimon.core.codec import event_to_json
from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, DeadlinePassed, InvalidOperation, RunError
from eudaimon.core.events import ApprovalDecided, ToolReconciled
from eudaimon.runtime.process.engines import register_engine
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore
from eudaimon.streaming import Done, Error, StreamEvent
from eudaimon.temporal import _schedules
from eudaimon.temporal._connect import connect
from eudaimon.temporal._deps import send_deps
from eudaimon.temporal._follow import stream_events
from eudaimon.temporal._gave_up import record_closed, record_if_gave_up
from eudaimon.temporal._payloads import (
    CONTINUED,
    CONTINUING,
    INLINE_LIMIT,
    WORKFLOW_FAILED,
    CancelInput,
    DecisionInput,
    RunInput,
    SentDeps,
)

if TYPE_CHECKING:
    from eudaimon.runtime.loop.cancel import CancellationToken
    from eudaimon.runtime.loop.journal import RunJournal
    from eudaimon.runtime.process.engines import Driver
    from eudaimon.runtime.process.schedules import Schedule

WORKFLOW = "eudaimon.run"
_CLOSED = "closed"
"""What `_settled_update` answers when the run's workflow has closed."""
_UPDATE_TRIES = 50


class TemporalEngine:
    """Runs an agent's runs as Temporal workflows on `task_queue`.

    Args:
        target: the Temporal frontend, `host:port`.
        task_queue: the queue the workers serving this agent poll.
        namespace: the Temporal namespace.
        inline_limit: strings longer than this many characters travel between workflow and
            activities as references to the store, keeping payloads under Temporal's limits.
        tool_timeout_s: how long one tool activity may take.
        model_timeout_s: how long one model activity may take.
        heartbeat_timeout_s: how soon a worker that died mid-activity is noticed.
        read_attempts: attempts Temporal gives a READ or idempotent tool's activity.
        poll_interval_s: how often `prompt_stream` reads the journal while the run goes on.
        continue_after_events: a run's workflow continues as new, at a step's end, once its
            history holds this many events (and whenever Temporal suggests it); 0: only then.
    """

    def __init__(
        self,
        target: str,
        *,
        task_queue: str,
        namespace: str = "default",
        inline_limit: int = INLINE_LIMIT,
        tool_timeout_s: float = 3600.0,
        model_timeout_s: float = 600.0,
        heartbeat_timeout_s: float = 30.0,
        read_attempts: int = 5,
        poll_interval_s: float = 0.05,
        continue_after_events: int = 10_000,
    ) -> None:
        if not target or "/" in target:
            raise ConfigurationError(f"a Temporal target is host:port, got {target!r}")
        if not task_queue:
            raise ConfigurationError("a TemporalEngine needs a task_queue, the one its workers poll")
        self.target = target
        self.task_queue = task_queue
        self.namespace = namespace
        self.inline_limit = inline_limit
        self.tool_timeout_s = tool_timeout_s
        self.model_timeout_s = model_timeout_s
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.read_attempts = read_attempts
        self.poll_interval_s = poll_interval_s
        if continue_after_events < 0:
            raise ConfigurationError(f"continue_after_events must be 0 or more, got {continue_after_events}")
        self.continue_after_events = continue_after_events
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = weakref.WeakKeyDictionary()

    @classmethod
    def from_url(cls, url: str) -> TemporalEngine:
        """`temporal://host:port/task-queue[?namespace=N]`."""
        parts = urlsplit(url)
        queue = parts.path.strip("/")
        if parts.scheme != "temporal" or not parts.netloc or not queue:
            raise ConfigurationError(f"a Temporal engine URL is temporal://host:port/task-queue, got {url!r}")
        query = parse_qs(parts.query)
        unknown = sorted(set(query) - {"namespace"})
        if unknown or "@" in parts.netloc:
            # Not echoed: what was put there may be a key, and the URL is journaled with every run.
            raise ConfigurationError(
                "a Temporal engine URL takes only ?namespace=N; TLS and keys come from Temporal's client "
                "configuration (TEMPORAL_API_KEY, TEMPORAL_TLS_*), never the URL, which every run journals"
            )
        return cls(parts.netloc, task_queue=queue, namespace=query.get("namespace", ["default"])[0])

    @property
    def url(self) -> str:
        query = "" if self.namespace == "default" else f"?namespace={self.namespace}"
        return f"temporal://{self.target}/{self.task_queue}{query}"

    async def client(self) -> Client:
        """A client for the current event loop, connected on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = await connect(self.target, self.namespace)
        return client

    def run_input(self, run_id: str, agent: str, deps: SentDeps | None = None) -> RunInput:
        return RunInput(
            run_id=run_id,
            agent=agent,
            inline_limit=self.inline_limit,
            tool_timeout_s=self.tool_timeout_s,
            model_timeout_s=self.model_timeout_s,
            heartbeat_timeout_s=self.heartbeat_timeout_s,
            read_attempts=self.read_attempts,
            deps=deps,
            continue_after_events=self.continue_after_events,
            local_appends=True,
            local_reads=True,
            patched=True,
        )

    async def start_and_settle(self, run_id: str, start: RunInput) -> None:
        """Start the run's workflow (id = run id) and wait until the run has finished or waits
        for a human, in one call: Temporal's update-with-start delivers the `settled` Update
        with the workflow's first task, so a new run costs no workflow task for its caller
        (and no round trip beyond the start). When the workflow already runs (a retried
        `prompt(run_id=…)`), the Update reaches it and this caller waits on it as the first
        did; when it has closed, this returns at once: a run is driven by one workflow, and
        is never started twice (`WorkflowIDReusePolicy.REJECT_DUPLICATE`).

        The Update names the workflow alone, not its first execution: after a continue-as-new
        the next `settled` reaches the execution that runs then (`_settled`).

        Raises:
            RunError: the run's workflow failed.
        """
        client = await self.client()

        async def ask() -> str:
            operation: WithStartWorkflowOperation[object, str] = WithStartWorkflowOperation(
                WORKFLOW,
                start,
                id=run_id,
                task_queue=self.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                result_type=str,
            )
            try:
                status: str = await client.execute_update_with_start_workflow(
                    "settled", start_workflow_operation=operation, result_type=str
                )
            except BaseException:
                # A start that failed (or a caller that went away) leaves its error on the
                # operation's handle too: taken here, so that asyncio does not report it unread.
                started = operation._workflow_handle
                if started.done() and not started.cancelled():
                    started.exception()
                raise
            return status

        try:
            status = await _settled_update(ask, run_id)
        except WorkflowAlreadyStartedError:
            return  # it ran and closed: the journal says how the run ended
        if status == CONTINUED:
            await _settled(client.get_workflow_handle(run_id, result_type=str))

    async def drive(
        self, driver: Driver, journal: RunJournal, cancel: CancellationToken | None, *, emit: bool
    ) -> AsyncIterator[StreamEvent]:
        run_id = journal.run_id
        sent: list[str] | None = None
        if journal.committed_seq < journal.state.next_seq:
            await _commit_start(driver.store, journal)
            sent = await self._small_journal(driver.store, run_id)
        try:
            await self.client()
        except Exception as exc:
            raise RunError(
                f"run {run_id}: cannot reach Temporal at {self.target} (namespace {self.namespace}): {exc}. The run "
                f"is journaled; once Temporal answers, `agent.resume({run_id!r})` starts it",
                run_id=run_id,
            ) from exc
        try:
            start = replace(self.run_input(run_id, driver.config.agent, send_deps(journal.deps)), journal=sent)
            handle: WorkflowHandle[object, str] = (await self.client()).get_workflow_handle(run_id, result_type=str)
            try:
                async for event in self._until_settled(
                    self.start_and_settle(run_id, start), handle, driver.store, journal, cancel, emit=emit
                ):
                    yield event
            except TemporalError:
                # The workflow closed under its callers (terminated, timed out): say so in the journal.
                gave_up = await record_if_gave_up(await self.client(), driver.store, run_id)
                if gave_up is None or not gave_up.status.is_terminal:
                    raise
            found = await record_if_gave_up(await self.client(), driver.store, run_id)
        except TemporalError as exc:
            raise _eudaimon_error(exc, run_id) from exc
        except RPCError as exc:
            raise _eudaimon_error(exc, run_id) from exc
        journal.replace_state(found if found is not None else await load_state(driver.store, run_id))
        if emit:
            state = journal.state
            if state.error and state.status.is_terminal and state.status != "completed":
                yield Error(state.error)
            yield Done(run_id, state.status.value)

    async def _small_journal(self, store: EventStore, run_id: str) -> list[str] | None:
        """A new run's journal as it can travel in the workflow's input (sparing the workflow
        a load activity): its one event, when that is under `inline_limit` characters."""
        events = await store.load(run_id)
        texts = [event_to_json(e) for e in events]
        return texts if len(texts) == 1 and len(texts[0]) <= self.inline_limit else None

    async def _until_settled(
        self,
        settling: Coroutine[Any, Any, None],
        handle: WorkflowHandle[object, str],
        store: EventStore,
        journal: RunJournal,
        cancel: CancellationToken | None,
        *,
        emit: bool,
    ) -> AsyncIterator[StreamEvent]:
        watcher = asyncio.ensure_future(_cancel_on(cancel, handle)) if cancel is not None else None
        try:
            settled = asyncio.ensure_future(settling)
            try:
                if emit:
                    async for event in self._follow(store, handle.id, journal.committed_seq - 1, settled):
                        yield event
                else:
                    await settled
            finally:
                settled.cancel()
        finally:
            if watcher is not None:
                watcher.cancel()

    async def _follow(
        self, store: EventStore, run_id: str, after_seq: int, settled: asyncio.Future[None]
    ) -> AsyncIterator[StreamEvent]:
        """What the journal says, as it grows, until the run has finished or waits."""
        while True:
            done = settled.done()
            for event in await store.load(run_id, after_seq=after_seq):
                after_seq = event.seq
                for item in stream_events(event):
                    yield item
            if done:
                settled.result()
                return
            await asyncio.wait({settled}, timeout=self.poll_interval_s)

    async def decide(self, store: EventStore, run_id: str, decision: ApprovalDecided | ToolReconciled) -> bool:
        """Send a decision to the run's workflow as the `decide` Update; False when no workflow
        was started for it (the decision is then appended to the store, and `resume` starts one).

        A workflow that closed outside the loop (terminated by an operator while the run waited
        for an approval, say) drives the run no more, and none can start again under its id:
        the run is journaled as failed, and the decision refused saying so, rather than recorded
        on a run that would then read `running` with nothing to drive it.

        Raises:
            InvalidOperation: the workflow refused the decision, or closed outside the loop.
        """
        if isinstance(decision, ApprovalDecided):
            sent = DecisionInput(
                decision.call_id,
                approved=decision.approved,
                by=decision.by,
                note=decision.note,
                arguments=decision.arguments,
            )
        else:
            sent = DecisionInput(decision.call_id, output=decision.output, retry=decision.retry, by=decision.by)
        handle = (await self.client()).get_workflow_handle(run_id)
        try:
            sent_to_it = await _send_update(handle, "decide", sent)
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == "DeadlinePassed":
                raise DeadlinePassed(cause.message) from exc
            raise InvalidOperation(cause.message if isinstance(cause, ApplicationError) else str(cause)) from exc
        except RPCError as exc:
            raise _eudaimon_error(exc, run_id) from exc
        if not sent_to_it:
            await self._refuse_if_gave_up(store, run_id)
        return sent_to_it

    async def cancel(self, run_id: str, reason: str, by: str | None = None) -> bool:
        """Ask the run's workflow to cancel the run (the `cancel` Update: the loop journals
        `run_cancelled` with `reason` and `by`); False when no workflow runs for it. A workflow
        on a worker that predates the Update is cancelled as a workflow, which says neither.

        Raises:
            InvalidOperation: the run has ended.
        """
        handle = (await self.client()).get_workflow_handle(run_id)
        try:
            return await _ask_to_cancel(handle, CancelInput(reason, by))
        except RPCError as exc:
            raise _eudaimon_error(exc, run_id) from exc

    async def drives(self, run_id: str) -> bool:
        """Whether the run's workflow runs now."""
        try:
            described = await (await self.client()).get_workflow_handle(run_id).describe()
        except RPCError as exc:
            if exc.status is RPCStatusCode.NOT_FOUND:
                return False
            raise _eudaimon_error(exc, run_id) from exc
        return described.status is WorkflowExecutionStatus.RUNNING

    async def record_closed(self, store: EventStore, agents: Collection[str], since: datetime | None) -> list[str]:
        """Journal as failed each run of `agents` not ended in `store` whose workflow closed
        outside the loop at or after `since` (`_gave_up.record_closed`); the ids journaled now."""
        return await record_closed(await self.client(), WORKFLOW, store, agents, since)

    async def _refuse_if_gave_up(self, store: EventStore, run_id: str) -> None:
        state = await record_if_gave_up(await self.client(), store, run_id)
        if state is not None and state.status.is_terminal:
            raise InvalidOperation(
                f"run {run_id} is {state.status.value}; the decision is not recorded: {state.error or 'it has ended'}"
            )

    async def add_schedule(self, schedule: Schedule) -> None:
        """Create the Temporal Schedule that fires `schedule` on this engine's queue (`_schedules`)."""
        await _schedules.create(await self.client(), self.task_queue, schedule)

    async def pause_schedule(self, schedule_id: str, paused: bool) -> None:
        await _schedules.pause(await self.client(), schedule_id, paused)

    async def remove_schedule(self, schedule_id: str) -> None:
        await _schedules.remove(await self.client(), schedule_id)

    async def schedule_times(self, schedule_id: str) -> tuple[datetime | None, datetime | None]:
        return await _schedules.times(await self.client(), schedule_id)

    def __repr__(self) -> str:
        return f"TemporalEngine({self.target!r}, task_queue={self.task_queue!r}, namespace={self.namespace!r})"


async def _settled(handle: WorkflowHandle[object, str]) -> None:
    """Until the run has finished or waits, following it into new executions.

    Raises:
        RunError: its workflow failed; the journal holds the run up to its last commit.
    """

    async def ask() -> str:
        status: str = await handle.execute_update("settled", result_type=str)
        return status

    while await _settled_update(ask, handle.id) == CONTINUED:
        pass  # the run goes on in a new execution of its workflow; the next update reaches it


async def _settled_update(ask: Callable[[], Awaitable[str]], run_id: str) -> str:
    """What one `settled` Update answered (`CONTINUED`: ask the new execution); asked again
    when a long wait outlived the RPC's deadline; `closed` when the workflow has closed.

    Raises:
        RunError: the run's workflow failed.
    """
    while True:
        try:
            return await ask()
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from None  # the caller went away; the run goes on
            # A long wait outlived the RPC's deadline: ask again.
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == WORKFLOW_FAILED:
                raise RunError(f"run {run_id}'s workflow failed: {cause.message}", run_id=run_id) from exc
            raise
        except RPCError as exc:
            if exc.status is not RPCStatusCode.NOT_FOUND:
                raise
            return _CLOSED  # the workflow has closed: the run is over


async def _commit_start(store: EventStore, journal: RunJournal) -> None:
    """Commit a new run's `run_started` (the workflow reads it from the store). A retried
    `prompt(run_id=…)` finds it committed already: the run is the one that exists, which this
    caller then waits on, as the first did.

    Raises:
        InvalidOperation: the run id is taken by a run with another input.
    """
    fresh = journal.committed_seq == 0
    try:
        await journal.flush()
    except ConcurrencyConflict:
        if not fresh:
            raise
        found = await load_state(store, journal.run_id)
        if found.input != journal.state.input:
            raise InvalidOperation(
                f"run {journal.run_id} exists with another input; prompt without run_id for a new run, or "
                f"`agent.resume({journal.run_id!r})` to wait for that one"
            ) from None
        journal.replace_state(found)


def _eudaimon_error(exc: BaseException, run_id: str) -> RunError:
    """What a caller is told when Temporal answers with an error: the run, and what to do."""
    return RunError(
        f"run {run_id}: Temporal answered {type(exc).__name__}: {exc}. The run may still be going on its "
        f"workflow (id {run_id}); it is never started twice: call `agent.resume({run_id!r})` (or prompt again "
        f"with run_id={run_id!r}) to wait for it, or `eudaimon runs show {run_id}` to see where it is",
        run_id=run_id,
    )


async def _send_update(handle: WorkflowHandle[object, str], name: str, argument: object) -> bool:
    """Send the run's workflow the Update `name`, again while it continues as new; False when
    no workflow runs under the handle's id.

    Raises:
        WorkflowUpdateFailedError: the workflow refused it.
        InvalidOperation: the workflow kept continuing as new.
    """
    for _ in range(_UPDATE_TRIES):
        try:
            await handle.execute_update(name, argument)
        except WorkflowUpdateFailedError as exc:
            if isinstance(exc.cause, ApplicationError) and exc.cause.type == CONTINUING:
                await asyncio.sleep(0.1)  # the run goes on in a new execution: ask that one
                continue
            raise
        except RPCError as exc:
            if exc.status is RPCStatusCode.NOT_FOUND:
                return False
            raise
        return True
    raise InvalidOperation(f"run {handle.id}'s workflow kept continuing as new; send the {name} again")


async def _ask_to_cancel(handle: WorkflowHandle[object, str], request: CancelInput) -> bool:
    """Send the `cancel` Update; False when no workflow runs under the handle's id. A workflow
    on a worker that predates the Update is cancelled as a workflow, which says neither who
    nor why.

    Raises:
        InvalidOperation: the run has ended, or its workflow kept continuing as new.
    """
    try:
        return await _send_update(handle, "cancel", request)
    except WorkflowUpdateFailedError as exc:
        if isinstance(exc.cause, ApplicationError) and exc.cause.type == "InvalidOperation":
            raise InvalidOperation(exc.cause.message) from exc
        await handle.cancel()  # no `cancel` Update on its worker
        return True


async def _cancel_on(cancel: CancellationToken, handle: WorkflowHandle[object, str]) -> None:
    """Cancel the run once `cancel` fires, with its reason and who; asked again while no
    workflow is found (its start is in flight with the caller's `settled` Update). The caller
    stops this once the run has settled."""
    await cancel.wait()
    with contextlib.suppress(InvalidOperation, RPCError):  # it ended meanwhile, or Temporal is away
        while True:
            if await _ask_to_cancel(handle, CancelInput(cancel.reason, cancel.by)):
                return
            await asyncio.sleep(0.1)


register_engine("temporal", TemporalEngine.from_url)
