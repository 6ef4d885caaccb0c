"""What the API answers, as schemas: `/openapi.json` describes every body a client will read.

The views (`views.py`) build these shapes from the journal; the routes declare them as their
`response_model`, so FastAPI checks each answer against its schema before it leaves, and a
generated client gets typed objects instead of `{}`. Event rows are the one open shape: each
event type adds its own fields to the five every row has.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    input_tokens: int
    output_tokens: int
    cached_tokens: int


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] | str = Field(description="A JSON object, or the raw text a model sent that was not one.")


class Message(BaseModel):
    id: str
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall]
    tool_call_id: str | None
    is_error: bool


class Call(BaseModel):
    call_id: str
    tool: str
    arguments: dict[str, Any] | str


class PendingApproval(Call):
    reason: str = Field(description="Why the call waits for a human, as the approval rule said.")
    deadline: str | None = Field(
        None, description="When the call is decided without a human if nobody decided (ISO 8601); null: never."
    )
    on_timeout: Literal["deny", "cancel"] | None = Field(
        None, description="What the deadline does: deny the call, or cancel the run."
    )


class WaitingCall(BaseModel):
    call_id: str
    tool: str
    wake_at: str | None = Field(description="When the call runs again (its tool raised RetryAfter).")


class Parent(BaseModel):
    run_id: str
    seq: int = Field(description="The parent's last event the fork kept.")


class AgentChange(BaseModel):
    version: str
    changes: list[str] = Field(description="What differed, in words (`tool refund: schema changed`).")


class _Run(BaseModel):
    run_id: str
    agent: str
    status: str = Field(
        description="queued, running, awaiting_approval, completed, failed, cancelled, budget_exceeded, …"
    )
    thread_id: str | None
    input: str
    output: str | None
    error: str | None
    steps: int
    usage: Usage
    cost_usd: float | None = Field(description="null when a step's price is unknown: unpriced, not free.")
    unpriced: str | None = Field(
        None, description="Why `cost_usd` is null (which model has no price); null when priced."
    )
    messages: list[Message]
    pending: list[Call]
    calls: dict[str, str] = Field(description="Each call's status, by call id.")
    parent: Parent | None
    version: str = Field(default="", description="The agent's version (`Agent(version=…)`) driving the run now.")
    replay_of: str | None = Field(default=None, description="The run this one replays (`agent.replay`).")
    agent_changes: list[AgentChange] = Field(
        default_factory=list, description="Each change of agent the run went through (`agent_replaced`)."
    )


class State(_Run):
    """The fold after an event: `GET /v1/runs/{id}/state`."""

    seq: int = Field(description="The last event folded.")


class Step(BaseModel):
    step: int
    seq: int
    model: str
    usage: Usage
    cost_usd: float | None
    duration_ms: int


class _Decision(BaseModel):
    seq: int
    at: str
    call_id: str | None
    by: str | None


class ApprovalDecision(_Decision):
    kind: Literal["approval"]
    approved: bool
    note: str | None
    arguments: dict[str, Any] | None = Field(
        None, description="The approver's edit: the arguments the call ran with (null: as the model asked)."
    )
    original_arguments: dict[str, Any] | None = Field(
        None, description="With an edit: the arguments the model asked for, which the edit replaced."
    )
    deadline: str | None = Field(None, description="Set when nobody decided by the deadline (`by` is `deadline`).")
    timed_out: bool = False


class ReconcileDecision(_Decision):
    kind: Literal["reconcile"]
    output: str | None
    retry: bool


class CancelDecision(_Decision):
    kind: Literal["cancel"]
    note: str | None


Decision = Annotated[ApprovalDecision | ReconcileDecision | CancelDecision, Field(discriminator="kind")]
"""Who decided what, in journal order; the fields follow the kind."""


class Driver(BaseModel):
    owner: str = Field(description="Who holds the run's lease: host:pid, then a nonce of the process and a counter.")
    lease_left_s: float = Field(
        description="Seconds before the lease lapses unless renewed (it is, every few seconds)."
    )


class Run(_Run):
    """A run with what only its events tell: `GET /v1/runs/{id}` and every decision's answer."""

    event_count: int
    created_at: str | None
    updated_at: str | None
    pending_approvals: list[PendingApproval]
    unknown_outcomes: list[Call]
    waiting: list[WaitingCall] = Field(default_factory=list, description="Calls sleeping until their wake_at.")
    wake_at: str | None = Field(None, description="A `waiting` run's earliest wake.")
    step_usage: list[Step]
    decisions: list[Decision]
    driver: Driver | None = Field(
        None,
        description="For a running run, the process driving it now (it holds the run's lease). Null while it runs "
        "means no process does: the one that drove it ended or stalled, and a server serving its agent on this "
        "store takes it over. Null too for a run not running, or driven by an engine (`driven_by_engine`).",
    )
    driven_by_engine: bool = Field(
        False, description="Whether an engine (Temporal) drives the run, not a process here."
    )
    driven_here: bool = Field(False, description="Whether this server drives the run now.")
    resumed: bool | None = Field(None, description="Set by decisions: whether this server drives the run on.")
    cancel_requested: bool | None = Field(
        None, description="Set by cancel (202): another process drives the run and journals the cancel."
    )


class RunSummary(BaseModel):
    """A run as the store's index keeps it (never folded per request)."""

    run_id: str
    agent: str
    thread_id: str | None
    status: str
    event_count: int
    last_event_type: str
    created_at: str
    updated_at: str
    input_preview: str = Field(description="The input's first 200 characters.")
    output_preview: str | None = Field(description="The final output's first 200 characters; null until completed.")
    error_preview: str | None = Field(
        description="Why it failed, exceeded its budget or was cancelled (first 200 characters); else null."
    )
    cost_usd: float | None = Field(description="USD; null while no call of the run was priced.")
    input_tokens: int
    output_tokens: int
    duration_ms: int | None = Field(description="First event to the terminal one; null while not ended.")
    tools: list[str] = Field(description="Tool names the model called, each once, first called first.")
    parent_run_id: str | None = Field(description="The run this one was forked from, or the parent of a child run.")
    version: str = Field(default="", description="The agent's version.")
    replay_of: str | None = Field(default=None, description="The run this one replays; listings leave replays out.")
    no_driver: bool = Field(
        default=False,
        description="Running, and no process drives it now: none holds its lease (the one that drove it ended or "
        "stalled) and no engine drives it. A server serving its agent on the store takes it over at its next "
        "recovery sweep, or someone resumes it. `GET /v1/runs/{id}` names the driver of a run that has one.",
    )


class RunPage(BaseModel):
    runs: list[RunSummary]
    next_cursor: str | None = Field(description="Pass it back as `cursor` for the next page; null on the last.")


class DashboardDay(BaseModel):
    """One agent's runs created on one UTC day."""

    agent: str
    day: str = Field(description="YYYY-MM-DD, UTC.")
    runs: int
    by_status: dict[str, int]
    cost_usd: float | None = Field(description="USD; null (unpriced, not free) when no run of the day had a price.")
    input_tokens: int
    output_tokens: int
    p50_duration_ms: int | None = Field(description="Nearest-rank median of the ended runs' durations.")
    p95_duration_ms: int | None
    error_rate: float = Field(description="Runs that failed or exceeded their budget, over the day's runs.")


class Dashboard(BaseModel):
    days: list[DashboardDay]


class EventRow(BaseModel):
    """One journal row as stored; the fields of its `type` follow the five every row has."""

    model_config = ConfigDict(extra="allow")

    v: int
    run_id: str
    seq: int
    at: str
    type: str


class EventPage(BaseModel):
    events: list[EventRow]
    more: bool


class ThreadSummary(BaseModel):
    thread_id: str
    agent: str
    runs: int
    finished: int
    updated_at: str


class ThreadList(BaseModel):
    threads: list[ThreadSummary]


class Thread(BaseModel):
    thread_id: str
    turn_count: int
    usage: Usage
    cost_usd: float | None
    guardrail_retries: int
    created_at: str
    runs: list[RunSummary]


class PendingCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] | str


class AgentResponse(BaseModel):
    """Daimon's `AgentResponse`, as `POST /v1/prompt` answers it."""

    run_id: str
    status: str
    text: str
    error: str | None
    iterations: int
    usage: Usage
    cost: float
    messages: list[Message]
    pending_approvals: list[PendingCall]


class InboxItem(BaseModel):
    run_id: str
    agent: str
    kind: Literal["approval", "reconciliation"]
    call_id: str
    tool: str
    arguments: dict[str, Any] | str = Field(description="As the tool will get them.")
    asked_at: str = Field(description="When the person was asked (ISO 8601).")
    deadline: str | None
    on_timeout: Literal["deny", "cancel"] | None
    effect: Literal["read", "write", "irreversible"] | None = Field(
        description="The tool's effect class as the run recorded it (None: not recorded). An irreversible "
        "call cannot be undone once approved."
    )
    reason: str | None = Field(description="Why the call waits, as the approval policy or the runtime said.")
    actions: list[Literal["approve", "deny", "reconcile", "retry"]] = Field(
        description="What the caller's key may do: none for a viewer."
    )


class Inbox(BaseModel):
    """`GET /v1/inbox`: every call waiting for a person, oldest first."""

    items: list[InboxItem]


class Health(BaseModel):
    status: Literal["ok"]
    driving: int
    streams: int


class Problem(BaseModel):
    """Every error answer: a sentence, or for a malformed request FastAPI's list of problems
    with a one-line `message` naming them."""

    detail: str | list[dict[str, Any]]
    message: str | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "description": what}
    for code, what in (
        (401, "No key, or a key this server does not know."),
        (403, "The key's role may not do this, or the request came from another origin."),
        (404, "No such run or thread."),
        (409, "The run cannot take this now (it ended, or the call is not waiting)."),
        (422, "The request is malformed, or the input was refused."),
        (415, "A request that changes something was not sent as `Content-Type: application/json`."),
        (421, "The `Host` is not a name this server serves (`--allowed-host NAME` adds one)."),
    )
}
"""The error answers every `/v1` route may give, declared once for all routers."""
