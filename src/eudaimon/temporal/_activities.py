"""The workflow's effects, run by workers as Temporal activities: the journal, the model, tools.

Each activity does exactly what the local runtime does at the same point of the loop, with the
worker's own agent (its model and tools) and the configured `EventStore`:

- `eudaimon.append` appends a batch of events with the usual `expected_seq` fence. Temporal
  may run it again after a lost worker; a batch found already in the store (same seqs, same
  JSON but for timestamps and durations) counts as appended, anything else raises `ConcurrencyConflict` (not retried).
- `eudaimon.model` appends the batch recording its attempt when the workflow sent one (one
  round trip for both), rebuilds the request from the journal and calls the model once:
  retries are the loop's, journaled as `model_retry_scheduled`.
- `eudaimon.tool` appends the batch holding its intent when the workflow sent one, then
  runs one call with the `ToolContext` of its `tool_started` intent,
  heartbeating so that a worker's death is noticed within the heartbeat timeout. Its result
  carries the images or documents the tool returned, so `tool_completed.parts` is what a
  local run journals. `ctx.deps` are the deps the run was prompted with when they could
  travel (`_deps`), else this worker's own (`create_worker(deps=…)`).
- `eudaimon.unstash` deletes what a finished run stashed.
- `eudaimon.sleep_until` (a local activity) sleeps until a short wait's due time, so that it
  fires on time rather than at the Temporal server's timer resolution (`_timers.SHORT_WAIT`).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from eudaimon.core.codec import event_from_json, event_to_dict, state_from_json, state_to_json
from eudaimon.core.errors import ConcurrencyConflict, ConfigurationError, ModelError, RunNotFound
from eudaimon.core.events import Event
from eudaimon.core.state import RunState
from eudaimon.datasources import DatasourceUnreachable
from eudaimon.models.base import ChatRequest, ToolSpec
from eudaimon.models.output import settle
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.datasource_calls import Committed, run_in_transaction
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore, Snapshot
from eudaimon.temporal._children import call_scope, suspension_details
from eudaimon.temporal._deps import received_deps
from eudaimon.temporal._payloads import (
    APPEND_FAILED,
    CARRIED_REFUSED,
    DATASOURCE_UNREACHED,
    FINE_LIMIT,
    MESSAGE,
    PAYLOAD_BUDGET,
    RESPONSE,
    AppendInput,
    LoadInput,
    ModelInput,
    ToolInput,
    ToolResultPayload,
    UnstashInput,
    dumps,
    encode_tool_result,
    json_bytes,
    may_hold_refs,
    received,
    refs_in,
    resolve,
    run_prefix,
    to_refs,
)
from eudaimon.temporal._timers import SLEEP_UNTIL, wait_result
from eudaimon.tools import RetryAfter, ToolContext, ToolReturn

T = TypeVar("T")

_CACHED_RUNS = 256


class Activities:
    """The activities of one worker: its agent's runtime configuration and the journal's store."""

    def __init__(
        self,
        config: RuntimeConfig,
        store: EventStore,
        *,
        remember: Callable[[RunState], Awaitable[None]] | None = None,
        heartbeat_every_s: float = 1.0,
        deps: Any = None,
        deps_type: Any = None,
    ) -> None:
        self.config = config
        self.store = store
        self._remember = remember
        self.heartbeat_every_s = heartbeat_every_s
        self.deps = deps
        """What tools get as `ctx.deps` for a run whose own deps could not travel (or had none)."""
        self.deps_type = deps_type
        # Folded states by run, so that a model request costs the events since the last one,
        # not a fold of the whole run (another worker's run is folded once, then followed).
        self._states: OrderedDict[str, RunState] = OrderedDict()

    def all(self) -> list[Callable[..., Any]]:
        return [self.load, self.append, self.model, self.tool, self.remember, self.unstash, self.sleep_until]

    @activity.defn(name="eudaimon.load")
    async def load(self, sent: dict[str, Any]) -> list[str] | dict[str, Any]:
        """The run's events as journal JSON, long strings as references to the store; with
        `from_snapshot`, the run's latest snapshot and only the events after it."""
        request = received(LoadInput, sent)
        run_id = request.run_id
        snapshot = await self.store.load_snapshot(f"run:{run_id}") if request.from_snapshot else None
        if snapshot is not None and state_from_json(snapshot.data) is None:
            snapshot = None  # another fold version's: fold the events instead, as locally
        after = snapshot.version if snapshot is not None else -1
        events = await self.store.load(run_id, after_seq=after)
        if not events and snapshot is None:
            raise ApplicationError(f"run {run_id} has no journal in the store", type="RunNotFound")
        saved = json.loads(snapshot.data) if snapshot is not None else None

        def encode(limit: int, blobs: dict[str, str]) -> list[str] | dict[str, Any]:
            out = [dumps(to_refs(event_to_dict(e), limit, blobs, run_id)) for e in events]
            if not request.from_snapshot:
                return out  # what workflows recorded before snapshots expect
            state = dumps(to_refs(saved, limit, blobs, run_id)) if saved is not None else None
            return {"state": state, "events": out}

        return await self._fitted(encode, request.inline_limit, f"run {run_id}'s journal")

    @activity.defn(name="eudaimon.append")
    async def append(self, sent: dict[str, Any]) -> None:
        """Append the batch, with the run's state as a snapshot when the batch crosses a
        multiple of `snapshot_every` (as a local driver does): loading it later, by anyone,
        folds only the events after it."""
        await self._append(received(AppendInput, sent))

    async def _append(self, request: AppendInput) -> None:
        texts = request.events
        if any(may_hold_refs(t) for t in texts):  # else read as sent: no parse to look for refs
            texts = await self._resolve_all([json.loads(t) for t in texts])
        events = [event_from_json(t) for t in texts]
        run_id, before = request.run_id, request.expected_seq
        snapshot = None
        every = request.snapshot_every
        if every and before // every != (before + len(events)) // every:
            snapshot = await self._snapshot_after(run_id, before, events)
        try:
            await self.store.append(run_id, before, events, snapshot)
        except BaseException as exc:
            self._states.pop(run_id, None)  # folded past what the store holds
            if not isinstance(exc, ConcurrencyConflict):
                raise
            await self._same_batch(request, events, exc)
            return
        self._fold_appended(run_id, before, events)

    def _fold_appended(self, run_id: str, before: int, events: list[Event]) -> None:
        """Fold a batch this worker appended into the run's cached state when it follows on
        from it: the model call that comes next (a model activity appends its attempt, then
        reads the run at that seq) then costs no read of the store."""
        state = self._states.get(run_id)
        if state is None or state.next_seq != before:
            return
        try:
            for event in events:
                state.apply(event)
        except Exception:
            self._states.pop(run_id, None)  # read from the store again on the next call

    async def _snapshot_after(self, run_id: str, before: int, events: list[Event]) -> Snapshot:
        state = RunState.from_events(events) if before == 0 else await self._state_at(run_id, before - 1)
        assert state is not None
        if before:
            for event in events:
                state.apply(event)
        return Snapshot(f"run:{run_id}", before + len(events) - 1, state_to_json(state))

    async def _same_batch(self, request: AppendInput, events: list[Event], exc: ConcurrencyConflict) -> None:
        try:
            stored = await self.store.load(request.run_id, after_seq=request.expected_seq - 1)
        except Exception:
            raise exc from None
        if [_payload(e) for e in stored[: len(events)]] == [_payload(e) for e in events]:
            return  # this very batch, appended by an attempt whose answer was lost
        raise ApplicationError(str(exc), type="ConcurrencyConflict", non_retryable=True) from exc

    @activity.defn(name="eudaimon.model")
    async def model(self, sent: dict[str, Any]) -> str:
        request = received(ModelInput, sent)
        if request.journal is not None:  # the attempt is durable before the model is called
            await self._append_carried(request.journal)
        state = await self._state_at(request.run_id, request.seq)
        messages = []
        for item in request.messages:
            if isinstance(item, list):
                messages.extend(state.messages[item[0] : item[1]])
            else:
                messages.append(MESSAGE.validate_json((await self._resolve_all([item]))[0]))
        tools = self.config.tool_specs if request.tools is None else [ToolSpec(**t) for t in request.tools]
        output = self.config.structured_output  # typed output asked natively or through a tool
        chat = ChatRequest(messages, tools, request.temperature, request.max_tokens, output=output)
        try:
            response = settle(await self._beating(self.config.model.generate(chat)), output)
        except ModelError as exc:
            raise _model_failure(exc) from exc
        answer = RESPONSE.dump_python(response, mode="json")
        return await self._fitted(
            lambda limit, blobs: dumps(to_refs(answer, limit, blobs, request.run_id)),
            request.inline_limit,
            f"the model's answer in run {request.run_id}",
        )

    async def _append_carried(self, batch: AppendInput) -> None:
        """Append the batch an effect's activity carries, before the effect."""
        try:
            await self._append(batch)
        except ApplicationError as exc:
            raise ApplicationError(exc.message, type=CARRIED_REFUSED, non_retryable=True) from exc
        except Exception as exc:
            raise ApplicationError(str(exc), type=APPEND_FAILED, non_retryable=True) from exc

    @activity.defn(name="eudaimon.tool")
    async def tool(self, sent: dict[str, Any]) -> ToolResultPayload:
        request = received(ToolInput, sent)
        if request.journal is not None:  # the intent is durable before the tool runs
            await self._append_carried(request.journal)
        tool = self.config.tools.get(request.tool)
        if tool is None:
            raise ApplicationError(f"this worker's agent has no tool {request.tool!r}", type="LookupError")
        ctx: ToolContext[Any] = ToolContext(
            request.run_id, request.call_id, request.idempotency_key, request.attempt, self._deps(request), request.step
        )
        output: str | ToolReturn
        try:
            arguments = tool.parse_arguments(request.arguments, validate=False)
            if tool.datasource is not None:
                # Its transaction commits here with its completion record; a retried activity
                # (this worker died after the commit) finds the record and does not run again.
                ctx = replace(ctx, attempt=max(ctx.attempt, activity.info().attempt))
                source = self.config.datasources[tool.datasource]
                done = await self._beating(run_in_transaction(source, tool, arguments, ctx))
                output = Committed(output=done.output, is_error=done.is_error, recovered=done.recovered)
                parts = done.parts
            else:
                async with call_scope(tool, self.config, self.store, request.run_id, request.call_id):
                    output, parts = await self._beating(tool.execute(arguments, ctx))
        except asyncio.CancelledError:
            raise
        except RetryAfter as exc:  # a durable wait: the workflow's timer runs the call again
            return wait_result(exc)
        except DatasourceUnreachable as exc:
            # The datasource failed eudaimon's own statements past the call's own retries: not
            # the tool's error. Temporal tries again; the next attempt looks up the record first.
            raise ApplicationError(str(exc), type=DATASOURCE_UNREACHED) from exc
        except Exception as exc:  # the model sees it, as locally; Temporal does not retry it
            details = suspension_details(exc)  # a child run's wait: the call waits too (`_children`)
            raise ApplicationError(str(exc), *details, type=type(exc).__name__, non_retryable=True) from exc
        encoded = encode_tool_result(output, parts)
        result: ToolResultPayload = await self._fitted(
            lambda limit, blobs: to_refs(encoded, limit, blobs, request.run_id),
            request.inline_limit,
            f"the result of {request.tool} in run {request.run_id}",
        )
        return result

    def _deps(self, request: ToolInput) -> Any:
        sent = request.deps
        if sent is None or sent.kept:
            return self.deps
        try:
            return received_deps(sent, self.deps_type)
        except ConfigurationError as exc:
            raise ApplicationError(str(exc), type="ConfigurationError", non_retryable=True) from exc

    @activity.defn(name="eudaimon.unstash")
    async def unstash(self, sent: dict[str, Any]) -> None:
        """Delete what a run stashed, once its workflow has finished with it."""
        request = received(UnstashInput, sent)
        for key in request.keys:
            if key.startswith("run:" + run_prefix(request.run_id)):  # never anything but its stash
                await self.store.delete_run(key.removeprefix("run:"))

    @activity.defn(name=SLEEP_UNTIL)
    async def sleep_until(self, due: str) -> None:
        """Sleep until `due` (ISO 8601, the workflow's clock) by this worker's clock: a short wait
        of a run, run as a local activity inside its workflow task (`_timers.wait_for_decision_or_due`).
        Cancelled when a decision ends the wait first."""
        left = (datetime.fromisoformat(due) - datetime.now(UTC)).total_seconds()
        if left > 0:
            await asyncio.sleep(left)

    @activity.defn(name="eudaimon.remember")
    async def remember(self, run_id: str) -> None:
        """Feed the agent's memory the run's committed messages (memory ignores ids it has)."""
        if self._remember is not None:
            await self._remember(await load_state(self.store, run_id))

    async def _beating(self, work: Awaitable[T]) -> T:
        """Await `work`, heartbeating meanwhile: a worker that dies stops beating, and Temporal
        then times the activity out after its heartbeat timeout rather than its whole budget.
        The beats are a timer of the loop's (run in the activity's context), not a task beside
        the work: a call that ends before the first beat, as most do, costs a timer handle."""
        if activity.info().is_local:
            return await work  # a local activity's liveness is its workflow task's: nothing to beat
        loop = asyncio.get_running_loop()
        every = self.heartbeat_every_s
        timer: asyncio.TimerHandle

        def beat() -> None:
            nonlocal timer
            activity.heartbeat()
            timer = loop.call_later(every, beat)

        timer = loop.call_later(every, beat)
        try:
            return await work
        finally:
            timer.cancel()

    async def _state_at(self, run_id: str, seq: int) -> RunState:
        state = self._states.pop(run_id, None)
        if state is not None and state.next_seq < seq + 1:  # behind: read what it lacks
            for event in await self.store.load(run_id, after_seq=state.next_seq - 1):
                if event.seq > seq:
                    break
                state.apply(event)
        if state is None or state.next_seq != seq + 1:
            try:
                state = await load_state(self.store, run_id, seq)
            except RunNotFound as exc:
                raise ApplicationError(str(exc), type="RunNotFound", non_retryable=True) from exc
        self._states[run_id] = state
        while len(self._states) > _CACHED_RUNS:
            self._states.popitem(last=False)
        return state

    async def _fitted(self, encode: Callable[[int, dict[str, str]], T], limit: int, what: str) -> T:
        """`encode(limit, blobs)`, its long strings stashed (`to_refs`): made again with
        `FINE_LIMIT` when that is over `PAYLOAD_BUDGET` bytes, which Temporal would refuse, the
        run stuck behind a result it can never record.

        Raises:
            ApplicationError: even then it does not fit (not retried: it never would).
        """
        for tried in dict.fromkeys((limit, min(limit, FINE_LIMIT))):
            blobs: dict[str, str] = {}
            value = encode(tried, blobs)
            size = json_bytes(value)
            if size <= PAYLOAD_BUDGET:
                await self._stash(blobs)
                return value
        raise ApplicationError(
            f"{what} is {size / 1e6:.1f} MB as JSON with every string over {FINE_LIMIT} characters stored apart, "
            "over what a Temporal payload may carry; drive this run without the fleet (an Agent without an engine, "
            "on the same store, resumes it)",
            type="PayloadTooLarge",
            non_retryable=True,
        )

    async def _stash(self, blobs: dict[str, str]) -> None:
        for key, text in blobs.items():
            await self.store.save_snapshot(Snapshot(key, 0, text))

    async def _resolve_all(self, values: list[Any]) -> list[str]:
        keys: set[str] = set()
        for value in values:
            refs_in(value, keys)
        blobs: dict[str, str] = {}
        for key in keys:
            blob = await self.store.load_snapshot(key)
            if blob is None:
                raise ApplicationError(f"stashed content {key} is missing from the store", type="CorruptEvent")
            blobs[key] = blob.data
        return [dumps(resolve(v, blobs)) if keys else dumps(v) for v in values]


def _payload(event: Event) -> dict[str, Any]:
    """An event as JSON without its timestamp, which a store may keep at its own precision,
    and without a duration: a local append's batch made again by a retried workflow task
    (`JournalStore._append`) reads that task's clock, the same events measured later."""
    row = event_to_dict(event)
    row.pop("at", None)
    row.pop("duration_ms", None)
    return row


def _model_failure(exc: ModelError) -> ApplicationError:
    """A provider's failure, classified as it was raised, for the workflow to rebuild."""
    details = {
        "model": exc.model,
        "status_code": exc.status_code,
        "retry_after_s": getattr(exc, "retry_after_s", None),
        "limit_tokens": getattr(exc, "limit_tokens", None),
        "requested_tokens": getattr(exc, "requested_tokens", None),
    }
    return ApplicationError(str(exc), details, type=type(exc).__name__, non_retryable=True)
