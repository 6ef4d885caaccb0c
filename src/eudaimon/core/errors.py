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
    └── MissingExtra              also an ImportError: a part whose optional dependencies are not installed

    EudaimonWarning (a UserWarning)
    └── ToolRetryIgnored          tool_retry_policy will not re-run some tools; names them

    ModelRetry                    (not an EudaimonError) raised by a tool or an output
                                  validator to hand the model a correction

Messages say what happened and what to do; they never contain secrets. A run error raised in
the process where user code raised carries that exception as its `__cause__`.
"""

from __future__ import annotations


class EudaimonError(Exception):
    """Base of every error eudaimon raises."""


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
    """An Agent, tool, model string or store URL was built wrong; fix the code that built it."""


class RunError(EudaimonError):
    """A run ended without completing. `run_id` names it, so its journal can be inspected."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class MaxIterations(RunError):
    def __init__(self, limit: int, *, run_id: str | None = None) -> None:
        super().__init__(
            f"the agent reached max_iterations={limit} without a final answer; "
            "raise max_iterations or check why the model keeps calling tools",
            run_id=run_id,
        )
        self.limit = limit


class Cancelled(RunError):
    def __init__(self, reason: str = "cancelled", *, run_id: str | None = None) -> None:
        super().__init__(f"the run was cancelled: {reason}", run_id=run_id)
        self.reason = reason


class GuardrailBlocked(RunError):
    def __init__(self, reason: str, *, guardrail: str = "", run_id: str | None = None) -> None:
        who = f" by {guardrail}" if guardrail else ""
        super().__init__(f"blocked{who}: {reason}", run_id=run_id)
        self.reason = reason
        self.guardrail = guardrail


class BudgetExceeded(RunError):
    def __init__(self, spent: float, limit: float, *, unit: str = "usd", run_id: str | None = None) -> None:
        super().__init__(f"budget exceeded: spent {spent:g} {unit} of a {limit:g} {unit} limit", run_id=run_id)
        self.spent = spent
        self.limit = limit
        self.unit = unit


class OutputRejected(RunError):
    """The model's final answer was rejected too many times in a row."""


class RunFailedError(RunError):
    """A run failed for a reason recorded in its `run_failed` event."""


class ModelError(EudaimonError):
    """A model call failed. `retryable` says whether a retry before any content may help."""

    retryable = False

    def __init__(self, message: str, *, model: str = "", status_code: int | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.status_code = status_code


class ModelRetryableError(ModelError):
    retryable = True


class ModelRateLimited(ModelRetryableError):
    def __init__(
        self, message: str, *, retry_after_s: float | None = None, model: str = "", status_code: int | None = 429
    ) -> None:
        super().__init__(message, model=model, status_code=status_code)
        self.retry_after_s = retry_after_s


class ModelUnavailable(ModelRetryableError):
    """A 5xx, a timeout or a dropped connection before any content arrived."""


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
    """400, 401 or 403: the request or the credentials are wrong, and retrying will not help."""


class ModelResponseInvalid(ModelError):
    """The model answered with something that could not be understood, or the stream was cut."""


class JournalError(EudaimonError):
    """The journal could not be read or written as asked."""


class ConcurrencyConflict(JournalError):
    def __init__(self, run_id: str, expected_seq: int, actual_seq: int) -> None:
        super().__init__(
            f"run {run_id}: expected to append at seq {expected_seq} but the journal is at {actual_seq}; "
            "another process is driving this run — reload its state before acting"
        )
        self.run_id = run_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq


class RunNotFound(JournalError, LookupError):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r} in this store; check the run id and the store URL")
        self.run_id = run_id


class CorruptEvent(JournalError):
    def __init__(self, run_id: str, seq: int, detail: str, *, event_type: str | None = None) -> None:
        kind = f" ({event_type})" if event_type else ""
        super().__init__(f"run {run_id} seq {seq}{kind}: the journal row does not parse: {detail}")
        self.run_id = run_id
        self.seq = seq
        self.event_type = event_type


class UnknownEventType(JournalError):
    def __init__(self, run_id: str, seq: int, event_type: str) -> None:
        super().__init__(
            f"run {run_id} seq {seq}: unknown event type {event_type!r}; "
            "it was written by a newer eudaimon or by another program — upgrade eudaimon to read it"
        )
        self.run_id = run_id
        self.seq = seq
        self.event_type = event_type


class LeaseHeld(JournalError):
    """Another process drives this run (or thread) and its lease has not expired."""

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
    """`tool_retry_policy` is set, but some tools may not run twice, so the policy skips them."""


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


class MissingExtra(EudaimonError, ImportError):
    """A part of eudaimon was used whose optional dependencies are not installed: a provider
    (`OpenAIModel`), a store (`PostgresStore`), a memory (`RedisMemory`), the server, Temporal,
    MCP, OpenTelemetry or the price tables. The message is the `pip install` line that fixes it;
    `extra` names the extra and `module` the package that was missing."""

    def __init__(self, feature: str, extra: str, module: str | None = None) -> None:
        missing = f" ({module} is not installed)" if module else ""
        super().__init__(
            f"{feature} needs the {extra!r} extra{missing}: pip install 'eudaimon[{extra}]'",
            name=module,
        )
        self.feature = feature
        self.extra = extra
        self.module = module
