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
import unicodedata
from dataclasses import dataclass
from datetime import timedelta

from eudaimon.core.decide import CallPlan, Decision, RunTools
from eudaimon.core.digest import idempotency_key
from eudaimon.core.effects import Effect
from eudaimon.core.errors import InvalidEvent
from eudaimon.core.events import ApprovalRequested, ToolCompleted, ToolDenied, ToolOutcomeUnknown, ToolStarted
from eudaimon.core.messages import ContentPart, JsonObject, ToolCall
from eudaimon.core.state import CallProgress, RunState
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.context import run_context
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.streaming import ToolResult
from eudaimon.tools import RequireApproval, Tool, ToolArgumentsError, ToolPolicy


@dataclass(slots=True)
class Ready:
    """A call whose intent is journaled: what executing it needs."""

    call: ToolCall
    tool: Tool
    arguments: dict[str, object]
    attempt: int
    key: str
    """The call's idempotency key, as its `tool_started` intent recorded it."""


@dataclass(slots=True)
class Batch:
    """One batch of tool calls, decided: the calls to execute, their intents journaled, and the
    recorded results of those that will not run (denied, unknown tool, bad arguments).

    Never changed once made, and not frozen: a frozen dataclass is made 2.5x slower, once a step.
    """

    ready: list[Ready]
    settled: list[ToolResult]


async def prepare_batch(journal: RunJournal, cfg: RuntimeConfig, step: RunTools) -> Batch:
    """Decide and journal one batch, its intents committed when a call must not run first.

    Execute its calls with `tool_calls.run_alone` or `run_together`.
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
    return Batch(ready, settled)


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
    """One call's way, in the order every extension point relies on:

    1. middleware `on_tool_call` sees the arguments decoded (a dict) and may repair them;
    2. the arguments are validated against the tool's schema: a call that does not decode or
       validate is an error result the model sees, and no one is asked to judge it;
    3. the approval policy, a human (`approval_requested`), hooks and the `tool_started`
       intent all see the same call: its arguments as the tool will get them, a dict.

    An approver's edit (`approval_decided.arguments`) takes the place of steps 1-2's result.
    """
    state = journal.state
    progress = state.calls.get(plan.call.id)
    refused = _refused(journal, cfg, plan, progress)
    if refused is not None:
        return refused
    edited = progress.edited if progress is not None else None
    if edited is not None:  # the approver edited the call: it runs with their arguments, as they sent them
        repaired: ToolCall | ToolResult = ToolCall(plan.call.id, plan.call.name, edited)
    else:
        repaired = await _repaired(journal, cfg, plan.call)
    if isinstance(repaired, ToolResult):
        return repaired
    call, tool = repaired, cfg.tools[repaired.name]  # the named tool, or the one middleware rerouted to
    try:
        # Decoded by `_repaired` unless an approver or middleware gave them since.
        fresh = edited is None and cfg.middleware is None and isinstance(call.arguments, dict)
        checked = call.arguments if fresh else tool.decode_arguments(call.arguments)
        arguments = tool.parse_arguments(checked, validate=cfg.validate_tool_inputs)
    except ToolArgumentsError as exc:
        return refuse_call(journal, call, _unusable(state, str(exc)))
    if checked is not call.arguments:
        call = ToolCall(call.id, call.name, checked)
    verdict = await _verdict(journal, cfg, plan, call, tool, None if edited is not None else progress)
    if verdict is ToolPolicy.DENY:
        return _deny(journal, call, "denied by the approval policy")
    if edited is not None and cfg.approval_policy is not None and await _judged(cfg, call, tool) is ToolPolicy.DENY:
        # approved where the policy was not known (a store-only CLI): the edit is a call it never allowed
        return _deny(journal, call, "denied by the approval policy: the approver's edited arguments")
    if verdict is not ToolPolicy.ALLOW:
        return _ask(journal, cfg, call, tool, verdict)
    if cfg.hooks is not None:
        # Before any call of the batch runs: a hook that raises fails the run with nothing started.
        await cfg.hooks.on_tool_call(call, run_context(journal, call_id=call.id))
    key = idempotency_key(state.run_id, call.id)
    try:
        journal.record(
            ToolStarted(
                call_id=call.id,
                tool=call.name,
                idempotency_key=key,
                attempt=plan.attempt,
                arguments=checked,
                effect=tool.effect.value,
                datasource=tool.datasource,
            )
        )
    except InvalidEvent as exc:  # e.g. arguments nested deeper than a journal row may hold
        return refuse_call(journal, call, f"the call cannot be journaled, so it did not run: {exc.problem}")
    return Ready(call, tool, arguments, plan.attempt, key)


def _refused(
    journal: RunJournal, cfg: RuntimeConfig, plan: CallPlan, progress: CallProgress | None
) -> ToolResult | None:
    """The recorded result of a call that may not run at all: denied by a human, an unknown
    tool, or a tool not offered at this step."""
    call = plan.call
    if plan.decision is Decision.DENY:
        return _deny(journal, call, _human_denial(progress))
    if call.name not in cfg.tools:
        known = ", ".join(sorted(cfg.tools)) or "none"
        return refuse_call(journal, call, f"Unknown tool {call.name!r}; available tools: {known}")
    offered = journal.state.offered_tools
    if offered is not None and all(spec.name != call.name for spec in offered):
        known = ", ".join(spec.name for spec in offered) or "none"
        return refuse_call(journal, call, f"Tool {call.name!r} is not available at this step; available: {known}")
    return None


async def _repaired(journal: RunJournal, cfg: RuntimeConfig, call: ToolCall) -> ToolCall | ToolResult:
    """The call as the model sent it, its arguments decoded, as middleware repaired (or
    rerouted) it; or the recorded result of a call that will not run."""
    state = journal.state
    tool = cfg.tools[call.name]
    if state.stop_reason == "max_tokens" and isinstance(call.arguments, str) and not call.arguments.strip():
        return refuse_call(journal, call, _unusable(state, "no arguments arrived"))
    try:
        call = ToolCall(call.id, call.name, tool.decode_arguments(call.arguments))
    except ToolArgumentsError as exc:
        return refuse_call(journal, call, _unusable(state, str(exc)))
    if cfg.middleware is None:
        return call
    decided = await cfg.middleware.run_on_tool_call(call)
    if isinstance(decided, ToolOutput):
        return complete(journal, call, decided.content, is_error=decided.is_error)
    if decided is not call and decided.name != call.name:
        refused = await _reroute(cfg, tool, decided)
        if refused is not None:
            return refuse_call(journal, call, refused)
    return decided


async def _verdict(
    journal: RunJournal, cfg: RuntimeConfig, plan: CallPlan, call: ToolCall, tool: Tool, asked: CallProgress | None
) -> ToolPolicy | str | tuple[str, RequireApproval]:
    """Whether the call runs (`ALLOW`), is denied (`DENY`), or why a human must decide first.

    `asked` is the call's progress unless an approver edited it: a human who approved other
    arguments than those about to run (middleware rewrote them differently this time) decides
    again, on what will run.
    """
    if plan.decision is Decision.ASK:
        parent = journal.state.parent
        copied_from = f"run {parent.run_id}" if parent is not None else "another run"
        return f"this fork asks again: the approval it copied from {copied_from} does not carry over"
    if plan.decision is Decision.POLICY:
        if cfg.approval_policy is None:  # the default policy, without a coroutine to await
            policy: ToolPolicy | str | RequireApproval = (
                ToolPolicy.REQUIRE_APPROVAL if tool.needs_approval else ToolPolicy.ALLOW
            )
        else:
            policy = await _judged(cfg, call, tool)
        if isinstance(policy, RequireApproval):  # a human decides, by the policy's deadline
            return _why_approval(tool), policy
        if not isinstance(policy, ToolPolicy):  # the policy raised: a human decides (fail closed)
            return policy
        if policy is ToolPolicy.DENY:
            return policy
        if policy is ToolPolicy.REQUIRE_APPROVAL:
            return _why_approval(tool)
    if asked is not None and asked.asked is not None and not same_arguments(asked.asked, call.arguments):
        return "the arguments changed after they were approved (middleware rewrote them)"
    return ToolPolicy.ALLOW


def _ask(
    journal: RunJournal, cfg: RuntimeConfig, call: ToolCall, tool: Tool, verdict: str | tuple[str, RequireApproval]
) -> ToolResult | None:
    """Journal the question to a human, with its deadline: the policy's, else the tool's, else
    the agent's (none: the call waits as long as it takes)."""
    reason, asked = verdict if isinstance(verdict, tuple) else (verdict, None)
    timeout_s = asked.timeout_s if asked is not None and asked.timeout_s is not None else None
    timeout_s = timeout_s or tool.approval_timeout_s or cfg.approval_timeout_s
    on_timeout = (
        (asked.on_timeout if asked is not None else None) or tool.on_approval_timeout or cfg.on_approval_timeout
    )
    deadline = journal.clock.now() + timedelta(seconds=timeout_s) if timeout_s is not None else None
    try:
        journal.record(
            ApprovalRequested(
                call_id=call.id,
                tool=call.name,
                arguments=call.arguments,
                reason=reason,
                deadline=deadline,
                on_timeout=on_timeout,
                timeout_s=timeout_s,
            )
        )
    except InvalidEvent as exc:  # arguments a journal row cannot hold: nothing to show a human
        return refuse_call(journal, call, f"the call cannot be journaled, so it did not run: {exc.problem}")
    return None


def _unusable(state: RunState, problem: str) -> str:
    """The error result of a call whose arguments do not read: said plainly when the model was
    cut off by its token limit in the middle of writing them."""
    if state.stop_reason == "max_tokens":
        return (
            "the call did not run: its arguments were cut off by the token limit (max_tokens) before they were "
            f"complete ({problem}). Make the call again with shorter arguments."
        )
    return problem


def _human_denial(progress: CallProgress | None) -> str:
    """What the model is told of a human's denial: who, and the note they wrote, as plain text."""
    by = plain_text(progress.decided_by, 80) if progress is not None and progress.decided_by else ""
    note = plain_text(progress.note, 500) if progress is not None and progress.note else ""
    said = f"denied by {by}" if by else "a human denied the call"
    return f"{said}: {note}" if note else said


def plain_text(text: str, limit: int) -> str:
    """`text` on one line, control, bidi and invisible characters written as `\\uXXXX`, clipped:
    a note goes to the model as what the human wrote, never as layout or hidden instructions."""
    shown = "".join(
        " " if ch in "\n\r\t" else f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch
        for ch in text
    ).strip()
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


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


async def _reroute(cfg: RuntimeConfig, original: Tool, call: ToolCall) -> str | None:
    """Why the reroute of a call to another tool by a middleware layer is refused, if it is.

    The approval decision and crash recovery were settled for the tool the model named, so a
    reroute may not escape them: its target must be one the policy simply allows, and may not
    turn a call that is safe to re-run after a crash into one that is not.
    """
    target = cfg.tools.get(call.name)
    if target is None:
        return f"middleware rerouted the call to unknown tool {call.name!r}"
    try:
        checked = ToolCall(call.id, call.name, target.decode_arguments(call.arguments))
        target.parse_arguments(checked.arguments, validate=cfg.validate_tool_inputs)
    except ToolArgumentsError as exc:
        return f"middleware rerouted the call to {call.name!r} with arguments it refuses: {exc}"
    if await _judged(cfg, checked, target) is not ToolPolicy.ALLOW:
        return f"middleware may not reroute a call to {call.name!r}: that tool is not allowed without a decision"
    if original.traits.rerunnable and not target.traits.rerunnable:
        return f"middleware may not reroute a call of {original.name!r} to {call.name!r}, which is not safe to re-run"
    return None


async def _judged(cfg: RuntimeConfig, call: ToolCall, tool: Tool) -> ToolPolicy | str | RequireApproval:
    """The approval policy's verdict on `call`, or, when the policy raised (or answered
    something that is not a `ToolPolicy`), why a human must decide instead: a policy's bug
    never lets its call run, and never fails the run."""
    if cfg.approval_policy is None:
        return ToolPolicy.REQUIRE_APPROVAL if tool.needs_approval else ToolPolicy.ALLOW
    try:
        verdict = cfg.approval_policy(call, tool)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if isinstance(verdict, RequireApproval):
            return verdict
        return ToolPolicy(verdict)
    except Exception as exc:
        return f"the approval policy raised {type(exc).__name__}: {plain_text(str(exc), 200)}; a human decides"


def _why_approval(tool: Tool) -> str:
    if tool.requires_approval:
        return f"{tool.name} requires approval"
    if tool.needs_approval:
        return f"{tool.name} is irreversible"
    return "the approval policy asked for a human decision"


def _deny(journal: RunJournal, call: ToolCall, reason: str) -> ToolResult:
    journal.record(ToolDenied(call_id=call.id, tool=call.name, reason=reason))
    return ToolResult(call.id, f"Tool call denied: {reason}", True)


def refuse_call(journal: RunJournal, call: ToolCall, reason: str) -> ToolResult:
    """Complete `call` without running it: `reason` is the error result the model reads."""
    return complete(journal, call, reason, is_error=True)


def complete(
    journal: RunJournal,
    call: ToolCall,
    output: str,
    *,
    is_error: bool,
    duration_ms: int = 0,
    parts: tuple[ContentPart, ...] = (),
    retry: bool = False,
    datasource: str | None = None,
    recovered: bool = False,
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
                datasource=datasource,
                recovered=recovered,
            )
        )
    except InvalidEvent as exc:  # a result that is not text (middleware's short circuit, say)
        output, is_error = f"the tool's result cannot be journaled: {exc.problem}", True
        journal.record(ToolCompleted(call_id=call.id, tool=str(call.name), output=output, is_error=True))
    return ToolResult(call.id, output, is_error)
