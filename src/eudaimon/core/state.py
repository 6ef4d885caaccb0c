"""A run's state, derived purely from its events: `RunState.apply` is the fold.

There is no other source of truth. Live execution, recovery after a crash, approval and time
travel all read a `RunState` built by applying events in order, so replaying the same events
always gives an equal state, and `RunState.from_events(events[: n + 1])` is the state after
event n. Applying one event costs O(1), amortized, plus the size of the current tool batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import assert_never

from eudaimon.core.errors import CorruptEvent
from eudaimon.core.events import (
    AgentReplaced,
    ApprovalDecided,
    ApprovalRequested,
    ApprovalTimedOut,
    AttemptTraced,
    BudgetExceeded,
    CallRef,
    Event,
    FailureKind,
    FinishRejected,
    GuardrailRejected,
    HandedOff,
    ModelAttemptStarted,
    ModelCalled,
    ModelContextRejected,
    ModelFailed,
    ModelRetryScheduled,
    ParentRef,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunQueued,
    RunStarted,
    RunTakenOver,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolRecord,
    ToolStarted,
    ToolWaiting,
    ToolWoke,
)
from eudaimon.core.messages import ContentPart, JsonObject, Message, ToolCall, ToolSpec, Usage
from eudaimon.core.settings import ModelSettings


class Status(StrEnum):
    """Where a run stands. A `str` enum, so `state.status == "completed"` holds."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_RECONCILIATION = "awaiting_reconciliation"
    COMPLETED = "completed"
    FAILED = "failed"
    BUDGET_EXCEEDED = "budget_exceeded"
    CANCELLED = "cancelled"
    QUEUED = "queued"
    """Accepted and journaled (`run_queued`), not started: it waits for its turn on its thread."""
    WAITING = "waiting"
    """A call sleeps durably (`RetryAfter`) until its `wake_at`; no process holds the run."""

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATUSES

    @property
    def is_paused(self) -> bool:
        return self in (Status.AWAITING_APPROVAL, Status.AWAITING_RECONCILIATION)


TERMINAL_STATUSES = frozenset({Status.COMPLETED, Status.FAILED, Status.BUDGET_EXCEEDED, Status.CANCELLED})
"""The statuses `Status.is_terminal` names; hot paths test membership, without the property call."""


class CallStatus(StrEnum):
    """Where one tool call of the current batch stands."""

    REQUESTED = "requested"
    """The model asked for it; no policy decision is journaled yet."""
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    REJECTED = "rejected"
    """A human said no; the denial is shown to the model when the run resumes."""
    STARTED = "started"
    RETRY = "retry"
    """An operator asked for an unknown outcome to be retried."""
    UNKNOWN = "unknown"
    WAITING = "waiting"
    """The tool asked to run again later (`tool_waiting`); `tool_woke` makes it `RETRY`."""
    DONE = "done"


@dataclass(frozen=True, slots=True)
class BudgetLimit:
    """The limit a run reached, as its `budget_exceeded` event recorded it."""

    spent: float
    limit: float
    unit: str = "usd"


@dataclass(frozen=True, slots=True)
class Edit:
    """A call a human approved with other arguments than it was asked about (`approval_decided`
    with `arguments`): who changed what, from what to what, kept for the whole run."""

    call_id: str
    tool: str
    by: str | None
    original: JsonObject | str | None
    """The arguments asked about: `original_arguments`, else the `approval_requested` ones."""
    arguments: JsonObject
    """The arguments the call runs with."""


PendingCall = ToolCall
"""A tool call that has no result yet: the model's own `ToolCall`, shared by the state rather
than copied, since a call's id, name and arguments never change while it waits."""


@dataclass(slots=True)
class CallProgress:
    """Mutable, but only `RunState.apply` changes it: updating in place keeps a step cheap."""

    call: PendingCall
    status: CallStatus = CallStatus.REQUESTED
    attempt: int = 0
    """The number of the last journaled attempt (0: never started)."""
    asked: JsonObject | str | None = None
    """The arguments the last `approval_requested` of the call showed a human: an approval is
    for those, and a call whose arguments differ when it is about to run is asked about again."""
    borrowed: bool = False
    """The last decision on the call (an approval, an operator's retry) is one a fork copied
    from its parent: the fork did not make it, so it asks again before the call runs."""
    edited: JsonObject | None = None
    """The arguments the approver edited (`approval_decided.arguments`): the call runs with
    these. None: it runs with the arguments it was asked about."""
    decided_by: str | None = None
    note: str | None = None
    """Who decided the call and why (`approval_decided`): a denial's note goes to the model."""
    deadline: datetime | None = None
    """When the call, awaiting approval, is decided without a human (`approval_requested.deadline`)."""
    timeout_s: float | None = None
    """How long the human was given (`approval_requested.timeout_s`)."""
    on_timeout: str = "deny"
    timed_out: bool = False
    """The deadline passed with no decision (`approval_timed_out`): a later decision is refused."""
    wake_at: datetime | None = None
    """When a waiting call (`tool_waiting`) is due to run again."""
    waits: int = 0
    """How many times the call has waited (`RetryAfter`): `Agent(max_waits=…)` bounds it."""

    @property
    def as_asked(self) -> PendingCall:
        """The call with the arguments a human is asked about: as the tool would get them (after
        middleware, decoded and validated), not the model's raw text."""
        if self.asked is None or self.asked is self.call.arguments:
            return self.call
        return ToolCall(self.call.id, self.call.name, self.asked)


@dataclass(slots=True)
class RunState:
    """The state of one run. Only `apply` writes its fields."""

    run_id: str
    agent: str = ""
    status: Status = Status.RUNNING
    messages: list[Message] = field(default_factory=list)
    steps: int = 0
    """Model invocations so far, rejected answers included."""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    pending: list[PendingCall] = field(default_factory=list)
    approvals: dict[str, bool] = field(default_factory=dict)
    tool_results: list[Message] = field(default_factory=list)
    """Results gathered so far for the current batch, in call order."""
    structured_output: object = None
    finish_rejections: int = 0
    next_seq: int = 0
    thread_id: str | None = None
    input: str = ""
    model: str = ""
    parent: ParentRef | None = None
    output: str | None = None
    error: str | None = None
    error_kind: FailureKind | None = None
    """Why a failed run failed (a `str` enum: `error_kind == "MaxIterations"` holds)."""
    error_limit: int | None = None
    """The limit a failed run reached, as its `run_failed` event recorded it."""
    error_guardrail: str = ""
    """The guardrail that blocked a failed run's answer."""
    calls: dict[str, CallProgress] = field(default_factory=dict)
    """The current batch of tool calls, in the order the model asked for them."""
    open_attempt: str | None = None
    """The request id of a model attempt that has started and has no outcome yet."""
    input_budget_tokens: int | None = None
    output_budget_tokens: int | None = None
    """The `max_tokens` a context rejection reserved for the step's later requests."""
    context_rejections: int = 0
    """Context rejections of the current step; reset when the model answers (even rejected)."""
    guardrail_rejections: int = 0
    """Consecutive output-guardrail rejections; reset when an answer is accepted."""
    model_retries: int = 0
    input_index: int = 0
    """Where this run's own messages begin: the input, after the system prompt and history."""
    uses_memory: bool = True
    memory_thread: str | None = None
    engine: str = ""
    """The engine driving the run ("" for the local runtime), as `run_started` named it."""
    budget_limit: BudgetLimit | None = None
    cost_known: bool = False
    """True once any call was priced: a cost of 0.0 then means free, not unknown."""
    tools: tuple[ToolRecord, ...] = ()
    """The toolsets' tools the run was started with (`run_started.tools`)."""
    parent_call: CallRef | None = None
    """The parent run's call that started this child run."""
    children: dict[str, str] = field(default_factory=dict)
    """Child runs by the id of the call that started them, in the order they appeared."""
    handed_off_to: str | None = None
    """The run of the agent this run handed the conversation to."""
    handoff_call: str | None = None
    """The call of the current batch whose output becomes the final answer (a handoff)."""
    traced_attempts: tuple[tuple[str, str], ...] = ()
    """(trace id, span id) of each traced attempt to drive the run."""
    model_settings: ModelSettings | None = None
    """The prompt's own settings, as `run_started` recorded them."""
    offered_tools: tuple[ToolSpec, ...] | None = None
    """The tool specs offered at the latest attempt; None: the agent's static tools."""
    tools_digest: str = ""
    tool_retries: dict[str, int] = field(default_factory=dict)
    """Consecutive `ModelRetry` corrections per tool; a tool's success resets its count."""
    stop_reason: str = ""
    """Why the last model call stopped (`model_called.stop_reason`: `end_turn`, `max_tokens`,
    …); "" before any. A call of a batch cut by `max_tokens` whose arguments do not read is
    told so."""
    principal: str | None = None
    """Who asked for the run, as `run_queued` named them (runs started without it: None)."""
    started: bool = True
    """False while the run has only its `run_queued` (queued, or cancelled before it began)."""
    edits: tuple[Edit, ...] = ()
    """The calls humans approved with edited arguments, in journal order."""
    version: str = ""
    """The version of the agent that drives the run now (`run_started`, then `agent_changed`)."""
    fingerprint: tuple[tuple[str, str], ...] = ()
    """The parts of that agent (`eudaimon.core.fingerprint`)."""
    agent_changes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each change of agent the run went through: (the new version, what differed)."""
    replay_of: str | None = None
    """The run this one replays (`agent.replay`)."""

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> RunState | None:
        """Fold events into a state; None when there are none."""
        state: RunState | None = None
        for event in events:
            if state is None:
                state = cls(run_id=event.run_id)
            state.apply(event)
        return state

    def awaiting_approval(self) -> list[PendingCall]:
        """The calls waiting for a human, each with the arguments the human is asked about."""
        return [p.as_asked for p in self.calls.values() if p.status is CallStatus.AWAITING_APPROVAL]

    def waiting_calls(self) -> list[PendingCall]:
        """The calls sleeping until their `wake_at` (`RetryAfter`)."""
        return [p.call for p in self.calls.values() if p.status is CallStatus.WAITING]

    def unknown_outcomes(self) -> list[PendingCall]:
        return [p.call for p in self.calls.values() if p.status is CallStatus.UNKNOWN]

    @property
    def last_message(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    def apply(self, event: Event) -> None:
        if event.seq != self.next_seq or event.run_id != self.run_id:
            raise CorruptEvent(
                event.run_id,
                event.seq,
                f"expected run {self.run_id} seq {self.next_seq}: the journal has a gap, a duplicate or a foreign row",
                event_type=event.type,
            )
        if self.next_seq == 0 and not isinstance(event.data, RunStarted | RunQueued):
            raise CorruptEvent(
                event.run_id, event.seq, "a run's first event must be run_started or run_queued", event_type=event.type
            )
        if self.status is Status.QUEUED and not isinstance(event.data, RunStarted | RunCancelled | RunFailed):
            raise CorruptEvent(
                event.run_id, event.seq, "a queued run's next event must be run_started (or how it ended)",
                event_type=event.type,
            )  # fmt: skip
        self.next_seq += 1
        data = event.data
        # The cases are tried in order: those of every step come first.
        match data:
            case ModelAttemptStarted():
                self.open_attempt = data.request_id
                self.model = data.model or self.model
                if data.tools is not None:
                    self.offered_tools = data.tools
                if data.tools_digest:
                    self.tools_digest = data.tools_digest
            case ModelCalled():
                self.open_attempt = None
                self.stop_reason = data.stop_reason
                self.steps += 1
                self.context_rejections = 0
                self._bill(data.usage, data.cost_usd)
                message = data.message if data.message.id else _with_id(data.message, f"{self.run_id}:{event.seq}")
                self.messages.append(message)
                calls = {c.id: CallProgress(c) for c in message.tool_calls}
                pending = list(message.tool_calls)
                if len(pending) != len(calls):  # a repeated call id: the batch holds it once
                    pending = [p.call for p in calls.values()]
                self.calls, self.pending = calls, pending
                self.tool_results = []
                self.approvals = {}
                if not message.tool_calls:
                    self.guardrail_rejections = 0
            case ToolStarted():
                self._set_call(data.call_id, CallStatus.STARTED, event, attempt=data.attempt)
            case ToolCompleted():
                if data.child_run_id is not None:
                    self.children[data.call_id] = data.child_run_id
                # What the call spent on models: a child run's, or a remote agent's (A2A).
                self._bill(data.usage, data.cost_usd)
                if data.retry:
                    self.tool_retries[data.tool] = self.tool_retries.get(data.tool, 0) + 1
                elif not data.is_error and self.tool_retries:
                    self.tool_retries.pop(data.tool, None)
                self._settle(data.call_id, data.output, data.is_error, event, data.parts)
            case RunStarted():
                if event.seq and self.status is not Status.QUEUED:
                    raise CorruptEvent(self.run_id, event.seq, "run_started after the run began", event_type=event.type)
                self.status, self.started = Status.RUNNING, True
                self.tools, self.parent_call = data.tools, data.parent_call
                self.agent, self.input, self.thread_id = data.agent, data.input, data.thread_id
                self.model, self.parent = data.model, data.parent
                self.guardrail_rejections = data.guardrail_retries
                self.input_index, self.uses_memory = max(len(data.messages) - 1, 0), data.uses_memory
                self.memory_thread, self.model_settings = data.memory_thread, data.model_settings
                self.engine, self.version, self.fingerprint = data.engine, data.version, data.fingerprint
                self.replay_of = data.replay_of
                self.messages = [
                    m if m.id else _with_id(m, f"{self.run_id}:0:{i}") for i, m in enumerate(data.messages)
                ]
            case RunQueued():
                if event.seq:
                    raise CorruptEvent(self.run_id, event.seq, "run_queued after the run began", event_type=event.type)
                self.agent, self.input, self.thread_id = data.agent, data.input, data.thread_id
                self.memory_thread, self.principal = data.memory_thread, data.principal
                self.status, self.started = Status.QUEUED, False
            case RunCompleted():
                self.output, self.structured_output = data.output, data.structured
                self._end(Status.COMPLETED)
            case ModelRetryScheduled():
                self.model_retries += 1
                if data.observed_usage is not None:
                    self.usage = self.usage + data.observed_usage
            case ModelContextRejected():
                self.open_attempt = None
                self.context_rejections += 1
                self.input_budget_tokens = data.input_budget_tokens
                self.output_budget_tokens = data.output_budget_tokens
            case ModelFailed():
                self.open_attempt = None
                self._bill(data.usage, data.cost_usd)
            case GuardrailRejected():
                self.open_attempt = None
                self.steps += 1
                self.context_rejections = 0
                self.guardrail_rejections += 1
                self._bill(data.usage, data.cost_usd)
                self.messages.append(Message.user(data.feedback, id=self._derived_id(event)))
            case ApprovalRequested():
                if data.child_run_id is not None:
                    self.children[data.call_id] = data.child_run_id
                self._set_call(data.call_id, CallStatus.AWAITING_APPROVAL, event)
                progress = self.calls[data.call_id]
                progress.asked, progress.edited = data.arguments, None
                progress.deadline, progress.on_timeout, progress.timed_out = data.deadline, data.on_timeout, False
                progress.timeout_s = data.timeout_s
            case ApprovalTimedOut():
                self.approvals[data.call_id] = False
                self._set_call(data.call_id, CallStatus.REJECTED, event)
                progress = self.calls[data.call_id]
                progress.borrowed, progress.edited, progress.timed_out = self._copied(event), None, True
                progress.decided_by, progress.note = "deadline", data.note
            case ToolWaiting():
                self._set_call(data.call_id, CallStatus.WAITING, event, attempt=data.attempt)
                progress = self.calls[data.call_id]
                progress.wake_at = data.wake_at
                progress.waits += 1
            case ToolWoke():
                self._set_call(data.call_id, CallStatus.RETRY, event)
                self.calls[data.call_id].wake_at = None
            case ApprovalDecided():
                self.approvals[data.call_id] = data.approved
                self._set_call(data.call_id, CallStatus.APPROVED if data.approved else CallStatus.REJECTED, event)
                progress = self.calls[data.call_id]
                progress.borrowed = self._copied(event)
                progress.edited = data.arguments if data.approved else None
                progress.decided_by, progress.note = data.by, data.note
                if progress.edited is not None:
                    original = data.original_arguments if data.original_arguments is not None else progress.asked
                    self.edits += (Edit(data.call_id, progress.call.name, data.by, original, progress.edited),)
            case ToolDenied():
                reason = data.reason or "the call was denied"
                self._settle(data.call_id, f"Tool call denied: {reason}", True, event)
            case ToolOutcomeUnknown():
                if data.child_run_id is not None:
                    self.children[data.call_id] = data.child_run_id
                self._set_call(data.call_id, CallStatus.UNKNOWN, event)
            case ToolReconciled():
                if data.retry:
                    self._set_call(data.call_id, CallStatus.RETRY, event)
                    self.calls[data.call_id].borrowed = self._copied(event)
                else:
                    self._settle(data.call_id, data.output or "", False, event)
            case HandedOff():
                self.handed_off_to, self.handoff_call = data.to_run_id, data.call_id
            case AttemptTraced():
                self.traced_attempts = (*self.traced_attempts, (data.trace_id, data.span_id))
            case RunTakenOver():
                pass  # history for people (the inspector, the logs): the state is as it was
            case FinishRejected():
                self.finish_rejections += 1
                correction = validator_correction(data.reason) if data.by_validator else finish_correction(data.reason)
                self.messages.append(Message.user(correction, id=self._derived_id(event)))
            case BudgetExceeded():
                self.budget_limit = BudgetLimit(data.spent, data.limit, data.unit)
                self._end(Status.BUDGET_EXCEEDED, error=data.reason)
            case RunFailed():
                self._end(Status.FAILED, error=data.error, kind=data.kind)
                self.error_limit, self.error_guardrail = data.limit, data.guardrail
            case RunCancelled():
                self._end(Status.CANCELLED, error=data.reason or "cancelled")
            case AgentReplaced():
                self.version, self.fingerprint = data.version, data.fingerprint
                self.agent_changes = (*self.agent_changes, (data.version, data.changes))
                for call_id in data.voided:
                    self.approvals.pop(call_id, None)
            case _:
                assert_never(data)

    def _copied(self, event: Event) -> bool:
        """Whether `event` is part of the history a fork copied from its parent."""
        return self.parent is not None and event.seq <= self.parent.seq

    def _derived_id(self, event: Event) -> str:
        return f"{self.run_id}:{event.seq}"

    def _bill(self, usage: Usage, cost_usd: float | None) -> None:
        if usage.input_tokens or usage.output_tokens or usage.cached_tokens:
            self.usage = self.usage + usage
        if cost_usd is not None:
            self.cost_usd += cost_usd
            self.cost_known = True

    def _set_call(self, call_id: str, status: CallStatus, event: Event, *, attempt: int | None = None) -> None:
        progress = self.calls.get(call_id)
        if progress is None:
            raise CorruptEvent(
                self.run_id, event.seq, f"call {call_id!r} is not in the current batch", event_type=event.type
            )
        progress.status = status
        if attempt is not None:
            progress.attempt = attempt
        self._refresh_batch()

    def _settle(
        self, call_id: str, output: str, is_error: bool, event: Event, parts: tuple[ContentPart, ...] = ()
    ) -> None:
        self._set_call(call_id, CallStatus.DONE, event)
        results = self.tool_results
        results.append(Message.tool(call_id, output, is_error, id=f"{self.run_id}:{event.seq}", parts=parts))
        if len(results) > 1:
            order = list(self.calls)
            results.sort(key=lambda m: order.index(m.tool_call_id or ""))
        if not self.pending:
            # All results are in: the model sees them together, in the order it asked.
            self.messages.extend(results)
            if self.handoff_call is not None:
                answer = next((m.content for m in results if m.tool_call_id == self.handoff_call), "")
                self.messages.append(Message.assistant(answer, id=f"{self.run_id}:{event.seq}:handoff"))
                self.handoff_call = None

    def _refresh_batch(self) -> None:
        pending: list[PendingCall] = []
        unknown = awaiting = waiting = False
        for progress in self.calls.values():
            status = progress.status
            if status is not CallStatus.DONE:
                pending.append(progress.call)
                if status is CallStatus.UNKNOWN:
                    unknown = True
                elif status is CallStatus.AWAITING_APPROVAL:
                    awaiting = True
                elif status is CallStatus.WAITING:
                    waiting = True
        self.pending = pending
        if self.status in TERMINAL_STATUSES:
            return
        if unknown:
            self.status = Status.AWAITING_RECONCILIATION
        elif awaiting:
            self.status = Status.AWAITING_APPROVAL
        elif waiting:
            self.status = Status.WAITING
        else:
            self.status = Status.RUNNING

    def _end(self, status: Status, *, error: str | None = None, kind: FailureKind | None = None) -> None:
        self.status = status
        self.error, self.error_kind = error, kind
        self.open_attempt = None


def _with_id(message: Message, id: str) -> Message:
    """`replace(message, id=id)` for the fold's hot path (every model answer), at a fraction of
    its cost. It names every field of `Message`; a test checks that none is missed."""
    return Message(
        role=message.role,
        content=message.content,
        tool_calls=message.tool_calls,
        tool_call_id=message.tool_call_id,
        is_error=message.is_error,
        id=id,
        parts=message.parts,
    )


def finish_correction(reason: str) -> str:
    """The user message that asks the model to fix a final answer the finish schema rejected."""
    return (
        f"Your final answer was rejected: {reason}\n"
        "Reply again with only a JSON value that matches the required schema."
    )


def validator_correction(reason: str) -> str:
    """The user message that hands the model an output validator's correction (`ModelRetry`)."""
    return f"Your final answer was rejected: {reason}\nFix this and give your final answer again."
