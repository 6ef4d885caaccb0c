"""Deciding one batch of tool calls before any runs: policy, approvals, middleware, hooks,
validation, and the `tool_started` intent of every call that will execute.

Every call that will execute gets its intent recorded before any of them runs. When a call of
the batch may not run twice, or changes anything at all (`must_commit_first`), the intents are
committed before any call runs; that append is the fence that lets exactly one process execute
such a call. A batch of READ calls only runs at once: its intents, the model's answer and the
results ride in one commit with the next model attempt's record, and a crash before that commit
leaves the attempt open, so the model is asked again and the calls run again (a READ does
nothing twice). Calls that cannot run (unknown tool, bad arguments, denied, short-circuited)
get their result without an intent, since nothing happens in the world. Executing the batch is
`tool_calls`.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass

from eudaimon.core.decide import CallPlan, Decision, RunTools
from eudaimon.core.digest import idempotency_key
from eudaimon.core.effects import Effect
from eudaimon.core.errors import InvalidEvent
from eudaimon.core.events import ApprovalRequested, ToolCompleted, ToolDenied, ToolOutcomeUnknown, ToolStarted
from eudaimon.core.messages import ContentPart, JsonObject, ToolCall
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.context import run_context
from eudaimon.runtime.journal import RunJournal
from eudaimon.streaming import ToolResult
from eudaimon.tools import Tool, ToolArgumentsError, ToolPolicy


@dataclass(slots=True)
class Ready:
    """A call whose intent is journaled: what executing it needs."""

    call: ToolCall
    tool: Tool
    arguments: dict[str, object]
    attempt: int
    key: str
    """The call's idempotency key, as its `tool_started` intent recorded it."""


async def prepare_batch(
    journal: RunJournal, cfg: RuntimeConfig, step: RunTools
) -> tuple[list[Ready], list[ToolResult]]:
    """Decide and journal one batch: the calls to execute, their intents committed, and the
    results of the calls that will not run (denied, unknown tool, bad arguments), recorded.

    Execute the calls with `run_alone` (one call, nothing to race it against: no task, no
    generator) or `run_together`.
    """
    for call in step.outcome_unknown:
        journal.record(ToolOutcomeUnknown(call_id=call.id, tool=call.name))
    ready: list[Ready] = []
    settled: list[ToolResult] = []
    for plan in step.calls:
        outcome = await _prepare(journal, cfg, plan)
        if isinstance(outcome, Ready):
            ready.append(outcome)
        elif outcome is not None:
            settled.append(outcome)
    if journal.replayed or any(must_commit_first(item.tool) for item in ready):
        await journal.flush()
    return ready, settled


def must_commit_first(tool: Tool) -> bool:
    """Whether a call of `tool` may run only once its intent (and the model's answer naming it)
    is durable.

    Only a READ may run first. A WRITE declared idempotent may not: its idempotency key comes
    from the call's id, which is durable only with the model's answer. Were that answer lost in
    a crash, the model, asked again, may name the call differently, and the write would run a
    second time under another key.
    """
    return tool.effect is not Effect.READ


async def _prepare(journal: RunJournal, cfg: RuntimeConfig, plan: CallPlan) -> Ready | ToolResult | None:
    call = plan.call
    tool = cfg.tools.get(call.name)
    if plan.decision is Decision.DENY:
        return _deny(journal, call, "a human denied the call")
    if tool is None:
        known = ", ".join(sorted(cfg.tools)) or "none"
        return complete(journal, call, f"Unknown tool {call.name!r}; available tools: {known}", True)
    offered = journal.state.offered_tools
    if offered is not None and all(spec.name != call.name for spec in offered):
        known = ", ".join(spec.name for spec in offered) or "none"
        return complete(journal, call, f"Tool {call.name!r} is not available at this step; available: {known}", True)
    if plan.decision is Decision.ASK:
        parent = journal.state.parent
        copied_from = f"run {parent.run_id}" if parent is not None else "another run"
        reason = f"this fork asks again: the approval it copied from {copied_from} does not carry over"
        journal.record(ApprovalRequested(call_id=call.id, tool=call.name, arguments=call.arguments, reason=reason))
        return None
    if plan.decision is Decision.POLICY:
        if cfg.approval_policy is None:  # the default policy, without a coroutine to await
            policy = ToolPolicy.REQUIRE_APPROVAL if tool.needs_approval else ToolPolicy.ALLOW
        else:
            policy = await _policy(cfg, call, tool)
        if policy is ToolPolicy.DENY:
            return _deny(journal, call, "denied by the approval policy")
        if policy is ToolPolicy.REQUIRE_APPROVAL:
            journal.record(
                ApprovalRequested(call_id=call.id, tool=call.name, arguments=call.arguments, reason=_why_approval(tool))
            )
            return None
    progress = journal.state.calls.get(call.id)
    edited = progress.edited if progress is not None else None
    if edited is not None:
        # The approver edited the call: it runs with their arguments, as they sent them.
        call = ToolCall(call.id, call.name, edited)
    # The reference's order: middleware (which may repair the arguments), hooks (which see
    # every call, valid or not), validation, execution.
    if cfg.middleware is not None and edited is None:
        decided = await cfg.middleware.run_on_tool_call(call)
        if isinstance(decided, ToolOutput):
            return complete(journal, call, decided.content, decided.is_error)
        if decided is not call:
            if decided.name != call.name:
                rerouted = await _reroute(cfg, tool, decided)
                if isinstance(rerouted, str):
                    return complete(journal, call, rerouted, True)
                tool = rerouted
            call = decided
    asked = progress.asked if progress is not None and edited is None else None
    if asked is not None and not same_arguments(asked, call.arguments):
        # A human approved other arguments than those about to run (middleware rewrote them):
        # they decide again, on what will run.
        journal.record(
            ApprovalRequested(
                call_id=call.id,
                tool=call.name,
                arguments=call.arguments,
                reason="the arguments changed after they were approved (middleware rewrote them)",
            )
        )
        return None
    if cfg.hooks is not None:
        # Before any call of the batch runs: a hook that raises fails the run with nothing started.
        await cfg.hooks.on_tool_call(call, run_context(journal, call_id=call.id))
    try:
        arguments = tool.parse_arguments(call.arguments, validate=cfg.validate_tool_inputs)
    except ToolArgumentsError as exc:
        return complete(journal, call, str(exc), True)
    key = idempotency_key(journal.state.run_id, call.id)
    try:
        journal.record(
            ToolStarted(
                call_id=call.id, tool=call.name, idempotency_key=key, attempt=plan.attempt, arguments=call.arguments
            )
        )
    except InvalidEvent as exc:  # e.g. arguments nested deeper than a journal row may hold
        return complete(journal, call, f"the call cannot be journaled, so it did not run: {exc.problem}", True)
    return Ready(call, tool, arguments, plan.attempt, key)


def same_arguments(approved: JsonObject | str, running: JsonObject | str) -> bool:
    """Whether two forms of a call's arguments (raw JSON text or an object) say the same."""
    if approved is running or approved == running:
        return True
    try:
        return _as_object(approved) == _as_object(running)
    except (ValueError, RecursionError):
        return False


def _as_object(arguments: JsonObject | str) -> object:
    return json.loads(arguments) if isinstance(arguments, str) else arguments


async def _reroute(cfg: RuntimeConfig, original: Tool, call: ToolCall) -> Tool | str:
    """The tool a middleware layer rerouted a call to, or why the reroute is refused.

    The approval decision and crash recovery were settled for the tool the model named, so a
    reroute may not escape them: its target must be one the policy simply allows, and may not
    turn a call that is safe to re-run after a crash into one that is not.
    """
    target = cfg.tools.get(call.name)
    if target is None:
        return f"middleware rerouted the call to unknown tool {call.name!r}"
    if await _policy(cfg, call, target) is not ToolPolicy.ALLOW:
        return f"middleware may not reroute a call to {call.name!r}: that tool is not allowed without a decision"
    if original.traits.rerunnable and not target.traits.rerunnable:
        return f"middleware may not reroute a call of {original.name!r} to {call.name!r}, which is not safe to re-run"
    return target


async def _policy(cfg: RuntimeConfig, call: ToolCall, tool: Tool) -> ToolPolicy:
    if cfg.approval_policy is None:
        return ToolPolicy.REQUIRE_APPROVAL if tool.needs_approval else ToolPolicy.ALLOW
    verdict = cfg.approval_policy(call, tool)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return ToolPolicy(verdict)


def _why_approval(tool: Tool) -> str:
    if tool.requires_approval:
        return f"{tool.name} requires approval"
    if tool.needs_approval:
        return f"{tool.name} is irreversible"
    return "the approval policy asked for a human decision"


def _deny(journal: RunJournal, call: ToolCall, reason: str) -> ToolResult:
    journal.record(ToolDenied(call_id=call.id, tool=call.name, reason=reason))
    return ToolResult(call.id, f"Tool call denied: {reason}", True)


def complete(
    journal: RunJournal,
    call: ToolCall,
    output: str,
    is_error: bool,
    duration_ms: int = 0,
    *,
    parts: tuple[ContentPart, ...] = (),
    retry: bool = False,
) -> ToolResult:
    try:
        journal.record(
            ToolCompleted(
                call_id=call.id,
                tool=call.name,
                output=output,
                is_error=is_error,
                duration_ms=duration_ms,
                parts=parts,
                retry=retry,
            )
        )
    except InvalidEvent as exc:  # a result that is not text (middleware's short circuit, say)
        output, is_error = f"the tool's result cannot be journaled: {exc.problem}", True
        journal.record(ToolCompleted(call_id=call.id, tool=str(call.name), output=output, is_error=True))
    return ToolResult(call.id, output, is_error)
