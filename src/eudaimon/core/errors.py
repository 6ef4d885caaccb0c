"""The error tree. Every error eudaimon raises is an `EudaimonError`:

    EudaimonError
    ├── ConfigurationError        a mistake caught when an Agent, tool or store is built
    ├── RunError                  how a run ended when it did not complete
    │   ├── MaxIterations
    │   ├── Cancelled
    │   ├── GuardrailBlocked
    │   ├── BudgetExceeded
    │   ├── OutputRejected        the final answer kept failing the finish schema or a guardrail
    │   └── RunFailedError        any other terminal failure recorded in the journal
    │       └── ContextExhausted  also a ContextTooLong: no smaller request was possible
    ├── ModelError                a provider or model failed (classified once, by type)
    │   ├── ModelRetryableError   worth retrying before any content arrived
    │   │   ├── ModelRateLimited
    │   │   └── ModelUnavailable  5xx, timeouts, dropped connections
    │   ├── ContextTooLong
    │   ├── ModelRequestRejected  400/401/403: retrying will not help
    │   │   └── ScriptExhausted   a ScriptedModel was called past its script (eudaimon.models)
    │   └── ModelResponseInvalid  a malformed body or a truncated stream
    ├── JournalError
    │   ├── ConcurrencyConflict   another writer appended first
    │   ├── RunNotFound
    │   ├── CorruptEvent          a row that does not parse
    │   ├── UnknownEventType      a row written by a newer eudaimon, or not by eudaimon
    │   ├── LeaseHeld             another process drives the run
    │   └── LeaseLost             this process stalled past its lease and must stop
    ├── InvalidEvent              an event that would not read back; refused before it is recorded
    ├── InvalidOperation          an approval, reconciliation or resume the run's state forbids
    │   ├── InvalidArguments      an approver's edited arguments the tool's schema refuses
    │   │   └── EditDenied        an approver's edit the approval policy denies
    │   ├── DeadlinePassed        a decision that came after the call's approval deadline
    │   ├── QueuedBehind          a queued run's turn on its thread has not come
    │   └── AgentChanged          Agent(on_change="refuse") met a run another agent started
    ├── MissingExtra              also an ImportError: a part whose optional dependencies are not installed
    │   (defined beside the part that raises them:)
    ├── ToolArgumentsError        also a ValueError: a call's arguments were unusable (eudaimon.tools)
    ├── BadCursor                 also a ValueError: a listing cursor this store did not make (eudaimon.stores.index)
    ├── BoundOutOfRange           also a ValueError: a listing date outside the calendar in UTC (eudaimon.stores.index)
    ├── BadBound                  also a ValueError: a listing's since or until that is no date (eudaimon.stores.index)
    ├── MCPConnectionError        an MCP server could not be started or reached (eudaimon.mcp)
    ├── MCPConnectionLost         an MCP request was in flight when the connection failed (eudaimon.mcp)
    ├── MCPToolError              an MCP server ran a tool and reported an error (eudaimon.mcp)
    ├── A2AToolError              a remote A2A agent's task did not complete (eudaimon.a2a)
    ├── DatasourceError           a datasource could not be reached or refused eudaimon's statements (eudaimon.datasources)
    │   └── DatasourceUnreachable it kept failing eudaimon's statements for one call through its retries
    │       └── DatasourceOutcomeUnknown  a local run stopped on a call that may have committed: resume it later
    ├── UnknownSchedule           also a KeyError: no schedule has this id (eudaimon.runtime.process.schedules)
    └── ScheduleEngineFailed      Temporal refused a schedule change; the record is unchanged (eudaimon.runtime.process.schedules)

    EudaimonWarning (a UserWarning)
    └── ToolRetryIgnored          tool_retry_policy will not re-run some tools; names them

    Signals user code raises to steer a run, not errors (so not EudaimonErrors):
    ModelRetry                    raised by a tool or an output validator to hand the model a correction
    ToolSuspended                 raised by a tool whose call cannot finish now: the run waits (eudaimon.tools)
    RetryAfter                    raised by a tool to run its call again later: the run sleeps durably (eudaimon.tools)

Messages say what happened and what to do; they never contain secrets. A run error raised in
the process where user code raised carries that exception as its `__cause__`.
"""


class EudaimonError(Exception):
    """Base of every error eudaimon raises: `except EudaimonError` catches them all. Each subclass
    says when it is raised and what to do; the message says it for the case at hand."""


class ModelRetry(Exception):
    """Raised by a tool or an output validator: `message` goes back to the model as a correction.

    A tool's correction is its (error) result, journaled like any result; a tool may be
    corrected `@tool(max_retries=n)` times in a row. An output validator's correction asks for
    another final answer, up to `Agent(max_output_retries=n)` times.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigurationError(EudaimonError, ValueError):
    """An Agent, tool, model string, memory or store URL was built wrong (raised when it is built,
    before any run): a tool parameter no JSON Schema can describe, a custom model or memory
    whose methods are not `async def`, a negative budget, … The message names the part and the
    fix; change the code that built it."""


class RunError(EudaimonError):
    """A run ended without completing (raised by `prompt`, `resume` and the like). `run_id` names
    it: `eudaimon runs show RUN_ID` or `agent.state(run_id)` shows why."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class MaxIterations(RunError):
    """The run took `max_iterations` model turns without a final answer. Raise `max_iterations`,
    or read the run's timeline to see why the model keeps calling tools."""

    def __init__(self, limit: int, *, run_id: str | None = None) -> None:
        super().__init__(
            f"the agent reached max_iterations={limit} without a final answer; "
            "raise max_iterations or check why the model keeps calling tools",
            run_id=run_id,
        )
        self.limit = limit


class Cancelled(RunError):
    """The run was cancelled (a `CancellationToken`, a deadline, the server); `reason` says by
    what. Nothing to fix: the journal keeps what happened up to the cancellation."""

    def __init__(self, reason: str = "cancelled", *, run_id: str | None = None) -> None:
        super().__init__(f"the run was cancelled: {reason}", run_id=run_id)
        self.reason = reason


class GuardrailBlocked(RunError):
    """An input or output guardrail blocked the run; `guardrail` names it and `reason` says why.
    Change the input, or the guardrail if it blocked what it should not."""

    def __init__(self, reason: str, *, guardrail: str = "", run_id: str | None = None) -> None:
        who = f" by {guardrail}" if guardrail else ""
        super().__init__(f"blocked{who}: {reason}", run_id=run_id)
        self.reason = reason
        self.guardrail = guardrail


class BudgetExceeded(RunError):
    """The run reached its `max_budget` (USD) or `max_budget_tokens` before a model call;
    `spent`, `limit` and `unit` say which. Raise the budget, or shorten the task."""

    def __init__(self, spent: float, limit: float, *, unit: str = "usd", run_id: str | None = None) -> None:
        super().__init__(f"budget exceeded: spent {spent:g} {unit} of a {limit:g} {unit} limit", run_id=run_id)
        self.spent = spent
        self.limit = limit
        self.unit = unit


class OutputRejected(RunError):
    """The model's final answer failed the `output_type` schema, an output validator or an
    output guardrail `max_output_retries + 1` times in a row. Make the schema or the
    instructions clearer, or allow more retries."""


class RunFailedError(RunError):
    """A run failed for a reason recorded in its `run_failed` event (a model error that retries
    did not cure, a tool that raised where the run cannot go on, …); the message is that reason
    and `__cause__` the exception, in the process where it was raised."""


class ModelError(EudaimonError):
    """A model call failed, classified once by the model that made it. `retryable` says whether
    a retry before any content may help (the runtime retries those itself); `status_code` is
    the provider's HTTP status when there was one."""

    retryable = False

    def __init__(self, message: str, *, model: str = "", status_code: int | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.status_code = status_code


class ModelRetryableError(ModelError):
    """A failure a retry may cure; the runtime retries it before any content arrived. Seen
    only once the retries ran out: check the provider's status, or retry later."""

    retryable = True


class ModelRateLimited(ModelRetryableError):
    """The provider answered 429 (too many requests); `retry_after_s` is its hint when it gave
    one. Lower the concurrency, or ask the provider for a higher limit."""

    def __init__(
        self, message: str, *, retry_after_s: float | None = None, model: str = "", status_code: int | None = 429
    ) -> None:
        super().__init__(message, model=model, status_code=status_code)
        self.retry_after_s = retry_after_s


class ModelUnavailable(ModelRetryableError):
    """A 5xx, a timeout or a dropped connection before any content arrived. Check the base URL
    and the network, or the provider's status page."""


class ContextTooLong(ModelError):
    """The request did not fit the model's context window.

    `limit_tokens` is the window the provider reported, when it said so; the runtime uses it
    to size a smaller request.
    """

    def __init__(
        self,
        message: str,
        *,
        limit_tokens: int | None = None,
        requested_tokens: int | None = None,
        model: str = "",
        status_code: int | None = 400,
    ) -> None:
        super().__init__(message, model=model, status_code=status_code)
        self.limit_tokens = limit_tokens
        self.requested_tokens = requested_tokens


class ContextExhausted(RunFailedError, ContextTooLong):
    """A run failed because the model kept refusing its request as too long, and the request
    could not be made smaller (the newest turn alone does not fit), or the retries ran out.

    It is both a `RunError` (with `run_id`) and a `ContextTooLong`, so either `except` catches it.
    """


class ModelRequestRejected(ModelError):
    """400, 401 or 403: the request or the credentials are wrong, and retrying will not help.
    Check the API key (never shown in the message), the model name and the settings sent."""


class ModelResponseInvalid(ModelError):
    """The model answered with something that could not be understood, or the stream was cut.
    Usually transient; if it repeats, the server is not speaking the provider's wire format."""


class JournalError(EudaimonError):
    """The journal could not be read or written as asked; the subclass says why. `except
    JournalError` catches every store's failures alike, whichever backend the URL names."""


class ConcurrencyConflict(JournalError):
    """Another writer appended to the run first (two processes drove it at once). Reload its
    state (`agent.state(run_id)`) and act on that; the journal is intact."""

    def __init__(self, run_id: str, expected_seq: int, actual_seq: int) -> None:
        super().__init__(
            f"run {run_id}: expected to append at seq {expected_seq} but the journal is at {actual_seq}; "
            "another process is driving this run — reload its state before acting"
        )
        self.run_id = run_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq


class RunNotFound(JournalError, LookupError):
    """No run with this id in the store. Check the run id and that the store URL is the one
    the run was journaled in (`eudaimon runs list --store URL`)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r} in this store; check the run id and the store URL")
        self.run_id = run_id


class CorruptEvent(JournalError):
    """A journal row does not parse (`run_id`, `seq` and `event_type` say which). The journal was
    changed by something other than eudaimon; restore it from a backup, or fork the run from
    before that seq."""

    def __init__(self, run_id: str, seq: int, detail: str, *, event_type: str | None = None) -> None:
        kind = f" ({event_type})" if event_type else ""
        super().__init__(f"run {run_id} seq {seq}{kind}: the journal row does not parse: {detail}")
        self.run_id = run_id
        self.seq = seq
        self.event_type = event_type


class UnknownEventType(JournalError):
    """A row's event type is unknown: it was written by a newer eudaimon (upgrade to read it),
    or by another program."""

    def __init__(self, run_id: str, seq: int, event_type: str) -> None:
        super().__init__(
            f"run {run_id} seq {seq}: unknown event type {event_type!r}; "
            "it was written by a newer eudaimon or by another program — upgrade eudaimon to read it"
        )
        self.run_id = run_id
        self.seq = seq
        self.event_type = event_type


class LeaseHeld(JournalError):
    """Another process drives this run (or thread) and its lease has not expired. Wait for it
    to finish, or for the lease to lapse if that process died."""

    def __init__(self, name: str, owner: str, expires_in_s: float) -> None:
        super().__init__(
            f"{name} is held by {owner} for another {expires_in_s:.1f}s; "
            "wait for it to finish or for its lease to lapse"
        )
        self.name = name
        self.owner = owner
        self.expires_in_s = expires_in_s


class LeaseLost(JournalError):
    """This process's lease lapsed (it stalled too long); it must stop before its next effect."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the lease on {name} lapsed; this process stopped driving it so another may take over")
        self.name = name


class EudaimonWarning(UserWarning):
    """Base of the warnings eudaimon gives about a configuration that works, but not as written."""


class ToolRetryIgnored(EudaimonWarning):
    """`tool_retry_policy` is set, but some tools may not run twice (WRITE effects without an
    idempotency key), so the policy skips them; the warning names them. Mark them idempotent,
    or accept that they are not retried."""


class InvalidEvent(EudaimonError, ValueError):
    """An event the runtime was about to record would not read back from the journal (a value
    of the wrong type, one JSON cannot hold, nesting too deep): nothing was recorded or written."""

    def __init__(self, event_type: str, problem: str, *, run_id: str | None = None) -> None:
        where = f"run {run_id}: " if run_id else ""
        super().__init__(f"{where}a {event_type} event cannot be journaled: {problem}; nothing was written")
        self.event_type = event_type
        self.problem = problem
        self.run_id = run_id


class InvalidOperation(EudaimonError):
    """The run's state does not allow what was asked (approving a call twice, approving a call
    that awaits no approval, resuming a finished run); read `agent.state(run_id)` and act on
    what it shows."""


class DeadlinePassed(InvalidOperation):
    """A decision on a call whose approval deadline passed: the call was decided by the deadline
    (`approval_timed_out`: denied, or the run cancelled), so the late decision is refused."""


class InvalidArguments(InvalidOperation, ValueError):
    """Arguments an approver edited that the tool would refuse (not a JSON object, or not what
    its schema says); the message names the problem, and nothing was journaled."""


class EditDenied(InvalidArguments):
    """An approver's edit the agent's approval policy denies (an edit is a new call, judged as
    the model's are): nothing was journaled and the call still waits for a decision."""


class AgentChanged(InvalidOperation):
    """`Agent(on_change="refuse")` was asked to continue a run (resume, approve, reconcile) that
    an agent with other parts started: `changes` names each difference, `run_id` the run.
    Nothing was recorded; continue it with the agent that started it, or with
    `on_change="continue"` to accept the change (approvals of changed tools are then asked again)."""

    def __init__(self, run_id: str, changes: tuple[str, ...], *, version: str = "", run_version: str = "") -> None:
        versions = f" ({run_version or '?'} -> {version or '?'})" if version or run_version else ""
        super().__init__(f"run {run_id} was started by another agent{versions}: {'; '.join(changes)}")
        self.run_id = run_id
        self.changes = changes
        self.version = version
        self.run_version = run_version


class QueuedBehind(InvalidOperation):
    """A queued run's turn has not come: run `ahead` must start (or stop running) first."""

    def __init__(self, run_id: str, ahead: str, thread_id: str) -> None:
        super().__init__(
            f"run {run_id} is queued on thread {thread_id!r} behind run {ahead}, which must start or stop running "
            "first; it starts by itself on a server that serves its agent"
        )
        self.run_id, self.ahead, self.thread_id = run_id, ahead, thread_id


class MissingExtra(EudaimonError, ImportError):
    """A part of eudaimon was used whose optional dependencies are not installed: a provider
    (`OpenAIModel`), a store (`PostgresStore`), a memory (`RedisMemory`), the server, Temporal,
    MCP, OpenTelemetry or the price tables. The message is the `pip install` line that fixes it;
    `extra` names the extra and `module` the package that was missing."""

    def __init__(self, feature: str, extra: str, module: str | None = None) -> None:
        missing = f" ({module} is not installed)" if module else ""
        super().__init__(f"{feature} needs the {extra!r} extra{missing}: {self.install_line(extra)}", name=module)
        self.feature = feature
        self.extra = extra
        self.module = module

    @staticmethod
    def install_line(extra: str) -> str:
        """The `pip install` line that adds `extra`: eudaimon is installed from a clone (no package
        index serves it), so the line is the clone's, run in its directory."""
        return f"pip install -e '.[{extra}]' (in the eudaimon clone)"
