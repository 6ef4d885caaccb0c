"""Every fact a run can record, one frozen dataclass per event type (DESIGN §3).

A payload's `type` tag is its name on the wire: tags are never renamed or reused, and new
fields always have defaults so that old journals stay readable. `Event` is the envelope
that gives a payload its place in a run: `run_id`, a gap-free `seq` and the time `at`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from eudaimon.core.messages import NO_USAGE, ContentPart, JsonObject, Message, ToolSpec, Usage
from eudaimon.core.quick_init import quick_init
from eudaimon.core.settings import ModelSettings


@dataclass(frozen=True, slots=True)
class ParentRef:
    """Where a forked run branched off: its history up to `seq` is the parent's."""

    run_id: str
    seq: int
    held: bool = False
    """Made not to start (`fork(…, start=False)`): no recovery sweep drives it; a resume does."""


@dataclass(frozen=True, slots=True)
class CallRef:
    """The tool call of another run that started this one: an agent used as a tool, or a
    handoff. The run it names holds the call; this run is its child."""

    run_id: str
    call_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRecord:
    """A tool a run was given by a toolset (an MCP server), as the run first saw it.

    Journaled in `run_started`, so a run resumed days later offers and classifies the same
    tools, even if the server changed meanwhile.
    """

    name: str
    """The name the model sees (with the toolset's prefix)."""
    description: str = ""
    parameters: JsonObject = field(default_factory=dict)
    effect: str = "write"
    idempotent: bool = False
    requires_approval: bool | None = None
    source: str = ""
    """The toolset that offered it, as the toolset names itself (`mcp:…`)."""
    remote_name: str = ""
    """The name the toolset knows the tool by."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    type: ClassVar[str] = "run_started"
    agent: str
    input: str
    messages: tuple[Message, ...]
    thread_id: str | None = None
    config_digest: str = ""
    parent: ParentRef | None = None
    model: str = ""
    guardrail_retries: int = 0
    """Consecutive output-guardrail rejections the thread carried into this run."""
    uses_memory: bool = True
    """False for `prompt_with_messages` runs and forks, whose messages memory never sees."""
    memory_thread: str | None = None
    """The thread as memory knows it (None: the memory's default thread)."""
    tools: tuple[ToolRecord, ...] = ()
    """The toolsets' tools this run uses, as listed when it started."""
    parent_call: CallRef | None = None
    """The call of the parent run that started this child run (agent as tool, handoff)."""
    model_settings: ModelSettings | None = None
    """The prompt's own `model_settings`, merged over the agent's for every call of the run."""
    engine: str = ""
    """Where the run is driven: "" in the process that prompts, or the engine's URL
    (`temporal://host:port/queue?namespace=…`), so that a decision from anywhere reaches it."""
    version: str = ""
    """`Agent(version=…)`: the agent's own name for what it is (free text)."""
    fingerprint: tuple[tuple[str, str], ...] = ()
    """What the agent was made of, part by part (`eudaimon.core.fingerprint`): a process whose
    agent differs names the difference before it continues the run."""
    replay_of: str | None = None
    """The run this one replays (`agent.replay`): its input, with recorded tool results."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentReplaced:
    """A process whose agent differs from the one the run last recorded continues it.

    Journaled before it acts, with what differs, so a run's history says which agent made each
    decision. `voided` are the calls whose approval no longer holds (their tool changed): each
    is asked about again, in the `approval_requested` that follows.
    """

    type: ClassVar[str] = "agent_replaced"
    version: str = ""
    previous_version: str = ""
    fingerprint: tuple[tuple[str, str], ...] = ()
    """The parts of the agent that continues the run (the run's fingerprint from here on)."""
    changes: tuple[str, ...] = ()
    """What differs, in words (`tool refund: schema changed`)."""
    voided: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQueued:
    """A run accepted before it could start (its thread busy, or its server about to stop):
    journaled at seq 0 so that no answer promises a run the journal does not hold.

    `run_started` follows at seq 1 when the run begins, with its messages assembled then: the
    thread's history depends on the runs before it. Only the input guardrails have run (the
    input is what they let through), so a refused input still leaves no trace.
    """

    type: ClassVar[str] = "run_queued"
    agent: str
    input: str
    thread_id: str | None = None
    memory_thread: str | None = None
    """The thread as memory knows it (None: the memory's default thread), as `run_started` will say."""
    principal: str | None = None
    """Who asked for the run (the API key's principal)."""
    request: dict[str, str] = field(default_factory=dict)
    """A digest of each field of the request that asked for it (`input`, `thread_id`, …): a
    reused idempotency key is checked against these, and the values themselves are not repeated."""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAttemptStarted:
    """Written before the model is called: an attempt without an outcome was interrupted."""

    type: ClassVar[str] = "model_attempt_started"
    step: int
    request_id: str
    request_digest: str
    model: str = ""
    tools_digest: str = ""
    """Which tool specs were offered (agents with `@tool(prepare=…)` only; empty otherwise)."""
    tools: tuple[ToolSpec, ...] | None = None
    """The specs offered, written when they differ from the run's previous attempt."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRetryScheduled:
    type: ClassVar[str] = "model_retry_scheduled"
    step: int
    request_id: str
    retry_number: int
    delay_ms: int
    error: str
    observed_usage: Usage | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelContextRejected:
    """The provider refused the request as too long; later requests fit `input_budget_tokens`."""

    type: ClassVar[str] = "model_context_rejected"
    step: int
    request_id: str
    input_budget_tokens: int
    error: str
    retry_number: int = 1
    """1 for the step's first rejection, 2 for the next, …: the runtime stops at a small cap."""
    output_budget_tokens: int | None = None
    """The `max_tokens` later requests of the step ask for (None: the agent's own setting)."""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCalled:
    type: ClassVar[str] = "model_called"
    step: int
    request_id: str
    message: Message
    usage: Usage = NO_USAGE
    cost_usd: float | None = None
    model: str = ""
    duration_ms: int = 0
    stop_reason: str = "end_turn"
    short_circuited_by: str = ""
    """The middleware layer whose `on_request` answered instead of the model: no model was
    called, so `model` and `request_id` are empty and nothing was billed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFailed:
    """A model call that failed after it may have been billed; kept for the audit and the bill."""

    type: ClassVar[str] = "model_failed"
    step: int
    error: str
    usage: Usage = NO_USAGE
    cost_usd: float | None = None
    request_id: str = ""
    model: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardrailRejected:
    """An output guardrail asked for another answer; the rejected text is deliberately absent."""

    type: ClassVar[str] = "guardrail_rejected"
    step: int
    guardrail: str
    feedback: str
    usage: Usage = NO_USAGE
    cost_usd: float | None = None
    model: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested:
    type: ClassVar[str] = "approval_requested"
    call_id: str
    tool: str
    arguments: JsonObject | str = field(default_factory=dict)
    reason: str = ""
    child_run_id: str | None = None
    """Set when the approval is its child run's: deciding there continues this run."""
    deadline: datetime | None = None
    """When the call is decided without a human if none decided (`approval_timed_out`): journaled,
    so whichever process is alive then fires it, and a restart loses nothing."""
    on_timeout: str = "deny"
    """What the deadline does: `"deny"` the call (the model is told) or `"cancel"` the run."""
    timeout_s: float | None = None
    """How long the human was given, as configured: what "no decision within …" says."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalTimedOut:
    """The deadline of a call awaiting approval passed with no decision: journaled once, by
    whichever process saw it first (a decision racing it loses on the journal's sequence)."""

    type: ClassVar[str] = "approval_timed_out"
    call_id: str
    deadline: datetime
    action: str = "deny"
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecided:
    type: ClassVar[str] = "approval_decided"
    call_id: str
    approved: bool
    by: str | None = None
    note: str | None = None
    arguments: JsonObject | None = None
    """Arguments the human edited: the call runs with these instead of those it was asked
    about (None: as asked). Checked against the tool's schema before they are journaled."""
    original_arguments: JsonObject | None = None
    """With an edit: the arguments the call was asked about (the model's), so that whoever reads
    the journal sees who changed what from what to what (None without an edit)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolWaiting:
    """A tool raised `RetryAfter`: the call sleeps durably until `wake_at`, then runs again
    (same idempotency key, next attempt). No process holds the run meanwhile."""

    type: ClassVar[str] = "tool_waiting"
    call_id: str
    tool: str
    attempt: int
    wake_at: datetime
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolWoke:
    """A waiting call's time came: journaled once, by whichever process saw it due first; the
    call then runs again."""

    type: ClassVar[str] = "tool_woke"
    call_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDenied:
    type: ClassVar[str] = "tool_denied"
    call_id: str
    tool: str
    reason: str = ""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    """The intent, written before the tool runs: the fence that lets one process execute a call."""

    type: ClassVar[str] = "tool_started"
    call_id: str
    tool: str
    idempotency_key: str
    attempt: int = 1
    arguments: JsonObject | str = field(default_factory=dict)
    """The arguments that run, after middleware: the model's raw JSON text or an object.
    Journals written before this field read as `{}`."""
    effect: str = "write"
    """The tool's effect class when the call started ("read", "write", "irreversible"), so a
    run's effects are listed from its journal alone. Journals written before it read "write"."""
    datasource: str | None = None
    """The datasource the call writes to, in one transaction with its completion record."""


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCompleted:
    type: ClassVar[str] = "tool_completed"
    call_id: str
    tool: str
    output: str
    is_error: bool = False
    duration_ms: int = 0
    child_run_id: str | None = None
    """The child run the call started (an agent used as a tool, a handoff)."""
    usage: Usage = NO_USAGE
    """What the call spent on models (a child run's usage), added to this run's."""
    cost_usd: float | None = None
    parts: tuple[ContentPart, ...] = ()
    """Images or documents the tool returned, beside the text in `output`."""
    retry: bool = False
    """The tool raised `ModelRetry`: `output` is its correction for the model."""
    datasource: str | None = None
    """The datasource the call's transaction committed in, with its completion record."""
    recovered: bool = False
    """Recovery read this result from the datasource's completion record: the call had
    committed before its process died, and did not run again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutcomeUnknown:
    """A call started and never completed, for a tool that may not run twice."""

    type: ClassVar[str] = "tool_outcome_unknown"
    call_id: str
    tool: str
    child_run_id: str | None = None
    """Set when the unknown outcome is its child run's: reconciling there continues this run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolReconciled:
    """An operator settled an unknown outcome: with the `output` it had, or by asking to `retry`."""

    type: ClassVar[str] = "tool_reconciled"
    call_id: str
    output: str | None = None
    retry: bool = False
    by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HandedOff:
    """The model handed the conversation to another agent: the output of call `call_id` (the
    receiving agent's answer) becomes this run's final answer once the batch is complete."""

    type: ClassVar[str] = "handed_off"
    call_id: str
    agent: str
    to_run_id: str
    """The receiving agent's run (`run_id` is the envelope's)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptTraced:
    """A process began driving the run and traced it: later attempts link to this span."""

    type: ClassVar[str] = "attempt_traced"
    trace_id: str
    span_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTakenOver:
    """A driver took the run over from one lost mid-run (it crashed or stalled: its lease
    lapsed, not given up). Journaled so the run's history says what happened: the inspector
    ends the interrupted span here and marks the takeover; the fold learns nothing from it."""

    type: ClassVar[str] = "run_taken_over"
    owner: str
    """The driver that took over (host:pid:nonce.n, as in the lease tables)."""
    orphaned_ms: int
    """From the lost driver's last event to this takeover: how long the run had no driver."""
    previous_owner: str | None = None
    """The lost driver, when this process saw its lease (else it had lapsed unseen)."""
    interrupted_seq: int = -1
    """The lost driver's last event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FinishRejected:
    type: ClassVar[str] = "finish_rejected"
    step: int
    reason: str
    by_validator: bool = False
    """An output validator asked for a correction (`ModelRetry`), rather than the schema."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetExceeded:
    type: ClassVar[str] = "budget_exceeded"
    reason: str
    spent: float
    limit: float
    unit: str = "usd"
    """`"usd"` or `"tokens"`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCompleted:
    type: ClassVar[str] = "run_completed"
    output: str
    structured: object = None


class FailureKind(StrEnum):
    """Why a run failed: what `RunFailed.kind` records, so a reader can raise the right error.

    The values are the error class names older journals wrote as free strings; any other string
    such a journal holds (an exception's type name) reads back as `EXCEPTION` or `MODEL_ERROR`.
    """

    MAX_ITERATIONS = "MaxIterations"
    OUTPUT_REJECTED = "OutputRejected"
    """The final answer kept failing the finish schema or the output guardrails."""
    GUARDRAIL_BLOCKED = "GuardrailBlocked"
    CONTEXT_TOO_LONG = "ContextTooLong"
    """Even the smallest request the run could make did not fit the model's context."""
    MODEL_ERROR = "ModelError"
    """The model failed for good (out of retries, or a failure retrying cannot fix)."""
    EXCEPTION = "Exception"
    """User code (a hook, middleware, a guardrail) or eudaimon itself raised."""

    @classmethod
    def _missing_(cls, value: object) -> FailureKind:
        if isinstance(value, str) and value.startswith("Model"):
            return cls.MODEL_ERROR
        return cls.EXCEPTION


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailed:
    type: ClassVar[str] = "run_failed"
    error: str
    kind: FailureKind = FailureKind.EXCEPTION
    """Which error ended the run, so a reader in any process raises the same one."""
    exception: str = ""
    """The type name of the exception that ended the run, when one did (`ValueError`, …)."""
    limit: int | None = None
    """The limit the run reached (`max_iterations`, the rejection cap), as it was configured then."""
    guardrail: str = ""
    """The guardrail that blocked the run's answer."""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, FailureKind):  # a kind given by its name, as older code did
            object.__setattr__(self, "kind", FailureKind(self.kind))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCancelled:
    type: ClassVar[str] = "run_cancelled"
    reason: str = ""
    by: str | None = None
    """Who cancelled, when the canceller named itself (an operator of the HTTP API always does)."""


EventData = (
    RunStarted
    | ModelAttemptStarted
    | ModelRetryScheduled
    | ModelContextRejected
    | ModelCalled
    | ModelFailed
    | GuardrailRejected
    | ApprovalRequested
    | ApprovalDecided
    | ApprovalTimedOut
    | ToolWaiting
    | ToolWoke
    | ToolDenied
    | ToolStarted
    | ToolCompleted
    | ToolOutcomeUnknown
    | ToolReconciled
    | HandedOff
    | AttemptTraced
    | RunTakenOver
    | FinishRejected
    | BudgetExceeded
    | RunCompleted
    | RunFailed
    | RunCancelled
    | RunQueued
    | AgentReplaced
)

EVENT_TYPES: tuple[type[EventData], ...] = (
    RunStarted,
    ModelAttemptStarted,
    ModelRetryScheduled,
    ModelContextRejected,
    ModelCalled,
    ModelFailed,
    GuardrailRejected,
    ApprovalRequested,
    ApprovalDecided,
    ApprovalTimedOut,
    ToolWaiting,
    ToolWoke,
    ToolDenied,
    ToolStarted,
    ToolCompleted,
    ToolOutcomeUnknown,
    ToolReconciled,
    HandedOff,
    AttemptTraced,
    RunTakenOver,
    FinishRejected,
    BudgetExceeded,
    RunCompleted,
    RunFailed,
    RunCancelled,
    RunQueued,
    AgentReplaced,
)
EVENT_REGISTRY: dict[str, type[EventData]] = {cls.type: cls for cls in EVENT_TYPES}
TERMINAL_TYPES = frozenset({"budget_exceeded", "run_completed", "run_failed", "run_cancelled"})


@quick_init
@dataclass(frozen=True, slots=True)
class Event:
    """A payload at its place in a run's journal."""

    run_id: str
    seq: int
    at: datetime
    type: str
    data: EventData

    def __post_init__(self) -> None:
        if self.type != self.data.type:
            raise ValueError(f"event type {self.type!r} does not match its payload {type(self.data).__name__}")

    @classmethod
    def of(cls, run_id: str, seq: int, at: datetime, data: EventData) -> Event:
        return cls(run_id, seq, at, data.type, data)
