"""The loop's effects, as a workflow plugs them in: each one an activity, each one journaled.

These run inside the workflow sandbox. `drive` gets a `RunJournal` whose store appends through
the `eudaimon.append` activity, a clock made of the workflow's deterministic time and
randomness, a model whose `generate` is the `eudaimon.model` activity, and tools whose
`execute` is the `eudaimon.tool` activity. Nothing else about the loop changes.

Every stash reference an activity returns is noted in `stashed`, so that the workflow can
delete what its run stashed once it has finished (`eudaimon.unstash`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import timedelta
from typing import Any, ClassVar

from pydantic_core import to_jsonable_python
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError

from eudaimon.core import errors as core_errors
from eudaimon.core.codec import event_to_json
from eudaimon.core.effects import Effect
from eudaimon.core.events import Event
from eudaimon.core.messages import ContentPart
from eudaimon.models.base import ChatRequest, ChatResponse, ModelStreamItem
from eudaimon.runtime.loop.clock import Clock, no_wait
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.tool_calls import OutcomeLost
from eudaimon.stores.base import Fence, Lease, RunSummary, Snapshot
from eudaimon.temporal._children import runs_a_child, suspended_from
from eudaimon.temporal._payloads import (
    APPEND_FAILED,
    CARRIED_REFUSED,
    DATASOURCE_UNREACHED,
    RESPONSE,
    AppendInput,
    ModelInput,
    RunInput,
    ToolInput,
    decode_tool_result,
    may_hold_refs,
    message_ranges,
    refs_in,
)
from eudaimon.temporal._timers import waiting_in
from eudaimon.tools import Tool, ToolArgumentsError, ToolContext, ToolReturn

_RAISED: dict[str, type[Exception]] = {}


_LOOKED_UP_PATCH = "eudaimon.lost-datasource-calls-are-looked-up"
"""Histories recorded when a datasource call whose every attempt was lost became an error
result replay so; newer ones recover the call (its record looked up, else run again)."""

_CARRIED = ("model_attempt_started", "tool_started")
"""A batch ending so is followed at once by the effect it announces, whose activity carries it."""


class _AppendFailed(Exception):
    """The model activity could not append the batch it carried (the store did not answer)."""


def workflow_clock() -> Clock:
    """Time, ids and jitter that a replay of the workflow's history draws again identically."""
    rng = workflow.random()

    def new_request_id() -> str:
        return f"req_{rng.getrandbits(64):016x}"

    def monotonic_ms() -> float:
        return workflow.time() * 1000.0

    return Clock(workflow.now, monotonic_ms, new_request_id, rng.random, no_wait)


class JournalStore:
    """The `EventStore` a workflow's journal appends to: the `eudaimon.append` activity.

    Only `append` is ever called by a driver; the events it committed are kept, so that the
    workflow can answer a state Query at any seq.
    """

    def __init__(self, run_id: str, events: list[Event], *, base_seq: int = 0, snapshot_every: int = 0) -> None:
        self.run_id = run_id
        self.events = events
        """The events this execution knows: those after the snapshot it was loaded from."""
        self.base_seq = base_seq
        """The seq of `events[0]`."""
        self.snapshot_every = snapshot_every
        self.carry = False
        """Let the effect's activity append a batch that ends with `model_attempt_started` or
        `tool_started` (the loop calls the model, or runs the tools, right after committing
        it): one round trip instead of two."""
        self.local = False
        """Append what no effect's activity carries with a local activity (`RunInput.local_appends`)."""
        self._carried: AppendInput | None = None

    def carried(self) -> AppendInput | None:
        """The batch the next model activity appends before its call, if any."""
        return self._carried

    def landed(self, batch: AppendInput) -> None:
        """The model activity carrying `batch` got past its append."""
        if self._carried is batch:
            self._carried = None

    async def settle(self) -> None:
        """Append a carried batch no model activity is known to have appended (the loop
        stopped, or the activity was lost): the journal is whole before anything else."""
        batch, self._carried = self._carried, None
        if batch is not None:
            await self._append(batch)

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """The workflow is the run's only driver: it holds no lease, so `fence` is always None."""
        await self.settle()
        batch = AppendInput(run_id, expected_seq, [event_to_json(e) for e in events], self.snapshot_every)
        if self.carry and events and events[-1].type in _CARRIED:
            self._carried = batch
        else:
            await self._append(batch)
        self.events.extend(events)

    async def _append(self, batch: AppendInput) -> None:
        """Append `batch` through `eudaimon.append`: a local activity when `local`.

        A local activity runs on this worker inside the workflow task that schedules it, and
        its result is recorded as one marker in the task's completion, beside what the
        workflow does next: for the run's last batch (its terminal event) that is the
        workflow's completion, so a run costs no activity round trip through the server
        beyond its model and tool calls, and the terminal event is in the store before the
        workflow completes. Crash windows, each leaving the journal whole:

        - the worker dies before the store commits: the workflow task times out, another
          worker replays the workflow to the same batch and appends it;
        - the worker dies after the commit, before the task completes: the replay appends
          the batch again, the store refuses its seqs, and the batch found there (the same
          events but for their timestamps: the replay's clock is its own task's) counts as
          appended (`Activities._same_batch`); the store keeps the first timestamps;
        - the task completes: the marker holds the append, and a replay does not run it.

        The store not answering is retried, as a remote append is; past a minute of
        retries Temporal waits for the next attempt with a timer.
        """
        run_id, expected_seq = batch.run_id, batch.expected_seq
        retry = RetryPolicy(
            initial_interval=timedelta(milliseconds=200),
            maximum_interval=timedelta(seconds=10),
            non_retryable_error_types=["ConcurrencyConflict", "CorruptEvent"],
        )
        try:
            if self.local:
                await workflow.execute_local_activity(
                    "eudaimon.append", batch, start_to_close_timeout=timedelta(seconds=60), retry_policy=retry
                )
            else:
                await workflow.execute_activity(
                    "eudaimon.append", batch, start_to_close_timeout=timedelta(seconds=60), retry_policy=retry
                )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == "ConcurrencyConflict":
                raise core_errors.ConcurrencyConflict(run_id, expected_seq, -1) from exc
            raise core_errors.CorruptEvent(run_id, expected_seq, f"the journal append failed: {cause}") from exc

    # The rest of the protocol is never used by a driver: reading is done by activities.
    async def load(self, run_id: str, after_seq: int = -1) -> list[Event]:
        return [e for e in self.events if e.seq > after_seq]

    async def list_runs(self, *, limit: int = 50, thread_id: str | None = None) -> list[RunSummary]:
        raise NotImplementedError("a workflow's journal lists no runs")

    async def delete_run(self, run_id: str) -> None:
        raise NotImplementedError("a workflow deletes no runs")

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> Lease:
        raise NotImplementedError("a workflow needs no lease: Temporal runs one execution per run id")

    async def release_lease(self, name: str, owner: str) -> None:
        raise NotImplementedError("a workflow needs no lease")

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        raise NotImplementedError("a workflow takes no snapshots")

    async def load_snapshot(self, key: str) -> Snapshot | None:
        return None

    async def delete_snapshots(self) -> int:
        return 0

    async def close(self) -> None:
        return None


class ActivityModel:
    """A model whose every call is one `eudaimon.model` activity, never retried by Temporal:
    retries are the loop's own, journaled as `model_retry_scheduled`."""

    def __init__(
        self,
        config: RuntimeConfig,
        journal: Callable[[], RunJournal],
        start: RunInput,
        stashed: set[str],
        store: Callable[[], JournalStore],
    ) -> None:
        self._config = config
        self._journal = journal
        self._start = start
        self._stashed = stashed
        self._store = store

    @property
    def model_id(self) -> str:
        return self._config.model.model_id

    async def generate(self, request: ChatRequest) -> ChatResponse:
        journal = self._journal()
        specs = self._config.tool_specs
        same_tools = request.tools is specs or tuple(request.tools) == specs
        store = self._store()
        payload = ModelInput(
            run_id=journal.run_id,
            seq=journal.committed_seq - 1,
            messages=message_ranges(request.messages, journal.state.messages),
            tools=None if same_tools else [asdict(t) for t in request.tools],
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            inline_limit=self._start.inline_limit,
            journal=store.carried(),
        )
        try:
            text = await self._call(payload)
        except _AppendFailed:
            await store.settle()  # appended on its own, retried as every append is; then the call
            text = await self._call(replace(payload, journal=None))
        if may_hold_refs(text):
            refs_in(json.loads(text), self._stashed)
        return RESPONSE.validate_json(text)

    async def _call(self, payload: ModelInput) -> str:
        store, carried = self._store(), payload.journal
        try:
            text: str = await workflow.execute_activity(
                "eudaimon.model",
                payload,
                start_to_close_timeout=timedelta(seconds=self._start.model_timeout_s),
                heartbeat_timeout=timedelta(seconds=self._start.heartbeat_timeout_s),
                retry_policy=RetryPolicy(maximum_attempts=1),
                result_type=str,
            )
        except ActivityError as exc:
            cause = exc.cause
            if carried is not None and isinstance(cause, ApplicationError):
                if cause.type == CARRIED_REFUSED:  # the batch was refused: no call was made
                    raise core_errors.ConcurrencyConflict(payload.run_id, carried.expected_seq, -1) from exc
                if cause.type == APPEND_FAILED:
                    raise _AppendFailed from exc
                store.landed(carried)  # the activity got past its append: the model refused
            raise _model_error(exc, self.model_id) from exc
        if carried is not None:
            store.landed(carried)
        return text

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelStreamItem]:
        yield await self.generate(request)


def activity_tools(
    config: RuntimeConfig, start: RunInput, stashed: set[str], store: Callable[[], JournalStore]
) -> dict[str, Tool]:
    """The agent's tools, each executing as an `eudaimon.tool` activity.

    A READ or idempotent tool's activity may be retried by Temporal (after a lost worker or
    a timeout) with the same `ToolContext`; any other tool's activity runs at most once, and
    one that may have started and did not report becomes `tool_outcome_unknown`.

    A READ tool (`RunInput.local_reads`) runs as a local activity: on the worker running the
    workflow task that schedules it, its result recorded as a marker when the task completes.
    A call that changes nothing may run again, which is the price: a worker lost before the
    task completes has the next worker replay the task and run the call again (after the
    task's timeout, 10 s, where a regular activity's heartbeat timeout would have told).
    A call that writes keeps a regular activity, whose completion the server records at once,
    as does one that runs a child run or a datasource's transaction.
    """
    return {name: _proxy(tool, start, stashed, store) for name, tool in config.tools.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteTool(Tool):
    """A tool whose `execute` is its `function` given the arguments and the context: the
    result (text and content parts, or a `ToolReturn`) comes back from a worker as it was.
    A datasource tool's transaction is the worker's (`eudaimon.tool`), not the workflow's."""

    transacts_here: ClassVar[bool] = False

    async def execute(
        self, arguments: Mapping[str, Any], ctx: ToolContext[Any]
    ) -> tuple[str | ToolReturn, tuple[ContentPart, ...]]:
        result: tuple[str | ToolReturn, tuple[ContentPart, ...]] = await self.function(arguments, ctx)
        return result


def _proxy(tool: Tool, start: RunInput, stashed: set[str], store: Callable[[], JournalStore]) -> Tool:
    rerunnable, transactional = tool.traits.rerunnable, tool.traits.transactional
    retry = RetryPolicy(maximum_attempts=start.read_attempts if rerunnable else 1)
    local = start.local_reads and tool.effect is Effect.READ and not transactional and not runs_a_child(tool)
    deps = start.deps if start.deps is not None and not start.deps.kept else None

    async def remote(arguments: Mapping[str, Any], ctx: ToolContext[Any]) -> tuple[str | ToolReturn, tuple[Any, ...]]:
        journal = store()
        payload = ToolInput(
            run_id=ctx.run_id,
            call_id=ctx.call_id,
            tool=tool.name,
            arguments=to_jsonable_python(dict(arguments)),
            idempotency_key=ctx.idempotency_key,
            attempt=ctx.attempt,
            inline_limit=start.inline_limit,
            step=ctx.step,
            deps=deps,
            journal=journal.carried(),
        )
        try:
            result = await run(payload)
        except _AppendFailed:
            await journal.settle()  # appended on its own, retried as every append is; then the call
            result = await run(replace(payload, journal=None))
        waited = waiting_in(result)
        if waited is not None:
            raise waited  # the loop journals `tool_waiting`; the workflow's timer wakes the call
        refs_in(result, stashed)
        return decode_tool_result(result)

    async def run(payload: ToolInput) -> Any:
        journal, carried = store(), payload.journal
        timeout = timedelta(seconds=start.tool_timeout_s)
        try:
            if local:
                result: Any = await workflow.execute_local_activity(
                    "eudaimon.tool", payload, start_to_close_timeout=timeout, retry_policy=retry
                )
            else:
                result = await workflow.execute_activity(
                    "eudaimon.tool",
                    payload,
                    start_to_close_timeout=timeout,
                    heartbeat_timeout=timedelta(seconds=start.heartbeat_timeout_s),
                    retry_policy=retry,
                )
        except ActivityError as exc:
            cause = exc.cause
            if carried is not None and isinstance(cause, ApplicationError):
                if cause.type == CARRIED_REFUSED:  # the tool did not run; the journal moved on elsewhere
                    raise OutcomeLost(f"{tool.name}: the journal refused its intent ({cause.message})") from exc
                if cause.type == APPEND_FAILED:
                    raise _AppendFailed from exc
                journal.landed(carried)  # the activity got past its append: the tool raised
            unreached = isinstance(cause, ApplicationError) and cause.type == DATASOURCE_UNREACHED
            if isinstance(cause, ApplicationError) and not unreached:
                raise suspended_from(cause, patched=start.patched) or _raised(
                    cause.type or "Exception", cause.message
                ) from exc
            if isinstance(cause, CancelledError):
                raise
            if transactional and workflow.patched(_LOOKED_UP_PATCH):
                # Every attempt was lost (workers died, the datasource did not answer): whether one
                # committed is in the datasource, not here. Recovery runs the call again, and its
                # first statement is the lookup; the model is never told an error it did not see.
                raise OutcomeLost(f"{tool.name}: its attempts were lost ({cause})") from exc
            if isinstance(cause, ApplicationError):  # the datasource unreached, replayed as it was recorded
                raise _raised("DatasourceError", cause.message) from exc
            if rerunnable:
                raise _raised("TimeoutError", f"the tool's activity did not finish: {cause}") from exc
            raise OutcomeLost(f"{tool.name}: the worker running it was lost or timed out ({cause})") from exc
        if carried is not None:
            journal.landed(carried)
        return result

    kept = {f.name: getattr(tool, f.name) for f in fields(Tool)}
    return RemoteTool(**{**kept, "function": remote, "is_async": True, "context_param": None})


def _raised(name: str, message: str) -> Exception:
    """An exception named as the one the tool raised on the worker, so the model is shown the
    same `Name: message` as locally."""
    if name == "ToolArgumentsError":
        return ToolArgumentsError(message)
    if name == "ModelRetry":
        return core_errors.ModelRetry(message)  # a correction for the model, as locally
    cls = _RAISED.get(name)
    if cls is None:
        cls = _RAISED[name] = type(name, (Exception,), {"__module__": "eudaimon.temporal.remote"})
    return cls(message)


def _model_error(exc: ActivityError, model_id: str) -> Exception:
    cause = exc.cause
    if isinstance(cause, TimeoutError):
        return core_errors.ModelUnavailable(f"the worker calling the model was lost or timed out ({cause})")
    if not isinstance(cause, ApplicationError):
        return core_errors.ModelUnavailable(f"the model activity failed: {cause}", model=model_id)
    details: dict[str, Any] = cause.details[0] if cause.details and isinstance(cause.details[0], dict) else {}
    name = cause.type or "ModelError"
    cls = getattr(core_errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, core_errors.ModelError)):
        return _raised(name, cause.message)
    model: str = details.get("model") or model_id
    status: int | None = details.get("status_code")
    if cls is core_errors.ModelRateLimited:
        return cls(cause.message, retry_after_s=details.get("retry_after_s"), model=model, status_code=status)
    if cls is core_errors.ContextTooLong:
        return cls(
            cause.message,
            limit_tokens=details.get("limit_tokens"),
            requested_tokens=details.get("requested_tokens"),
            model=model,
            status_code=status,
        )
    return cls(cause.message, model=model, status_code=status)
