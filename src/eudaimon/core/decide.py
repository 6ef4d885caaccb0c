"""`next_step`: what a run should do next, decided from its state alone.

The same decision serves a live run, a run resumed after a crash and a run resumed after a
human decided: the runtime only ever asks "what now?" at a loop boundary. A tool call found
started but not completed is therefore always an interrupted one, and a model attempt without
an outcome is re-issued as a new attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from eudaimon.core.effects import ToolTraits
from eudaimon.core.events import FailureKind
from eudaimon.core.messages import Role
from eudaimon.core.state import TERMINAL_STATUSES, CallStatus, PendingCall, RunState, Status


@dataclass(frozen=True, slots=True, kw_only=True)
class DecideConfig:
    """The parts of an agent's configuration that decisions depend on."""

    max_iterations: int = 25
    tools: Mapping[str, ToolTraits] = field(default_factory=dict)
    max_finish_rejections: int = 3
    max_guardrail_retries: int = 8


class Decision(StrEnum):
    POLICY = "policy"
    """No decision is journaled yet: the runtime applies the approval policy."""
    RUN = "run"
    DENY = "deny"
    ASK = "ask"
    """A fork's copy of its parent's approval: the runtime asks a human again."""


@dataclass(frozen=True, slots=True)
class CallPlan:
    call: PendingCall
    attempt: int
    decision: Decision


@dataclass(frozen=True, slots=True)
class CallModel:
    step: int


@dataclass(frozen=True, slots=True)
class RunTools:
    calls: tuple[CallPlan, ...]
    outcome_unknown: tuple[PendingCall, ...] = ()
    """Interrupted calls that may not run again: journal `tool_outcome_unknown` for them."""


@dataclass(frozen=True, slots=True)
class AwaitApproval:
    calls: tuple[PendingCall, ...]


@dataclass(frozen=True, slots=True)
class AwaitReconciliation:
    calls: tuple[PendingCall, ...]
    outcome_unknown: tuple[PendingCall, ...] = ()


@dataclass(frozen=True, slots=True)
class AwaitWake:
    """Calls sleep until their `wake_at` (`RetryAfter`): the run stops here, holding nothing,
    and whoever sees them due journals `tool_woke` and drives it on."""

    calls: tuple[PendingCall, ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """The model gave a final answer; the runtime validates it and completes the run."""

    text: str


@dataclass(frozen=True, slots=True)
class Fail:
    error: str
    kind: FailureKind
    limit: int | None = None
    """The configured limit the run reached, journaled so the error never reads today's config."""


@dataclass(frozen=True, slots=True)
class Stop:
    """The run is over; there is nothing to do."""

    status: Status


Step = CallModel | RunTools | AwaitApproval | AwaitReconciliation | AwaitWake | Finish | Fail | Stop


def next_step(state: RunState, config: DecideConfig) -> Step:
    if state.status in TERMINAL_STATUSES:
        return Stop(state.status)
    if state.pending:
        return _next_for_batch(state, config)
    last = state.messages[-1] if state.messages else None
    if last is not None and last.role is Role.ASSISTANT and not last.tool_calls:
        return Finish(last.content)
    if state.finish_rejections >= config.max_finish_rejections:
        return Fail(
            f"the final answer failed the output schema {state.finish_rejections} times in a row",
            FailureKind.OUTPUT_REJECTED,
            config.max_finish_rejections,
        )
    if state.guardrail_rejections >= config.max_guardrail_retries:
        return Fail(
            f"output guardrails rejected {state.guardrail_rejections} answers in a row",
            FailureKind.OUTPUT_REJECTED,
            config.max_guardrail_retries,
        )
    if state.steps >= config.max_iterations:
        return Fail(
            f"max_iterations={config.max_iterations} reached without a final answer",
            FailureKind.MAX_ITERATIONS,
            config.max_iterations,
        )
    return CallModel(state.steps + 1)


def _next_for_batch(state: RunState, config: DecideConfig) -> Step:
    plans: list[CallPlan] = []
    newly_unknown: list[PendingCall] = []
    for progress in state.calls.values():
        call = progress.call
        match progress.status:
            case CallStatus.REQUESTED:
                plans.append(CallPlan(call, 1, Decision.POLICY))
            case CallStatus.APPROVED:
                # A fork never runs a call on a decision it did not make itself.
                decision = Decision.ASK if progress.borrowed else Decision.RUN
                plans.append(CallPlan(call, progress.attempt + 1, decision))
            case CallStatus.RETRY:
                if progress.borrowed:
                    newly_unknown.append(call)  # the parent's operator asked; the fork's must
                else:
                    plans.append(CallPlan(call, progress.attempt + 1, Decision.RUN))
            case CallStatus.REJECTED:
                plans.append(CallPlan(call, progress.attempt, Decision.DENY))
            case CallStatus.STARTED:
                traits = config.tools.get(call.name)
                # A tool unknown to this agent is not known to be safe: fail closed.
                if traits is not None and traits.rerunnable:
                    plans.append(CallPlan(call, progress.attempt + 1, Decision.RUN))
                else:
                    newly_unknown.append(call)
            case CallStatus.AWAITING_APPROVAL | CallStatus.UNKNOWN | CallStatus.WAITING | CallStatus.DONE:
                pass
    if plans:
        return RunTools(tuple(plans), tuple(newly_unknown))
    unknown = tuple(state.unknown_outcomes()) + tuple(newly_unknown)
    if unknown:
        return AwaitReconciliation(unknown, tuple(newly_unknown))
    awaiting = tuple(state.awaiting_approval())
    if not awaiting:
        sleeping = tuple(state.waiting_calls())
        if sleeping:
            return AwaitWake(sleeping)
    return AwaitApproval(awaiting)
