"""One batch of tool calls: policy, intents, parallel execution, results in call order.

Every call that will execute gets its `tool_started` intent committed before any of them
runs; that append is the fence that lets exactly one process execute a call. Calls that
cannot run (unknown tool, bad arguments, denied, short-circuited) get their result without an
intent, since nothing happens in the world. Completions are committed as they arrive while
siblings still run; the last one rides with the next model attempt's record.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from eudaimon.core.decide import CallPlan, Decision, RunTools
from eudaimon.core.digest import idempotency_key
from eudaimon.core.events import (
    ApprovalRequested,
    HandedOff,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolStarted,
)
from eudaimon.core.messages import ToolCall, Usage
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.runtime.cancel import CancellationToken
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.scope import CallScope, current_call
from eudaimon.streaming import ToolResult
from eudaimon.tools import Tool, ToolArgumentsError, ToolContext, ToolPolicy, ToolReturn, ToolSuspended

_NO_USAGE = Usage()

Outcome = tuple[str | ToolReturn | ToolSuspended, bool, int]
"""What executing a call gave: its output (or why it must wait), whether it failed, its ms."""


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
    await journal.flush()
    return ready, settled


async def run_alone(journal: RunJournal, cfg: RuntimeConfig, item: Ready) -> ToolResult:
    """Execute one call and record its result."""
    return await _finish_call(journal, cfg, item, *await _run_one(journal, cfg, item))


async def _prepare(journal: RunJournal, cfg: RuntimeConfig, plan: CallPlan) -> Ready | ToolResult | None:
    call = plan.call
    tool = cfg.tools.get(call.name)
    if plan.decision is Decision.DENY:
        return _deny(journal, call, "a human denied the call")
    if tool is None:
        known = ", ".join(sorted(cfg.tools)) or "none"
        return _complete(journal, call, f"Unknown tool {call.name!r}; available tools: {known}", True)
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
    # The reference's order: middleware (which may repair the arguments), hooks (which see
    # every call, valid or not), validation, execution.
    if cfg.middleware is not None:
        decided = await cfg.middleware.run_on_tool_call(call)
        if isinstance(decided, ToolOutput):
            return _complete(journal, call, decided.content, decided.is_error)
        if decided is not call:
            if decided.name != call.name:
                rerouted = await _reroute(cfg, tool, decided)
                if isinstance(rerouted, str):
                    return _complete(journal, call, rerouted, True)
                tool = rerouted
            call = decided
    if cfg.hooks is not None:
        # Before any call of the batch runs: a hook that raises fails the run with nothing started.
        await cfg.hooks.on_tool_call(call)
    try:
        arguments = tool.parse_arguments(call.arguments, validate=cfg.validate_tool_inputs)
    except ToolArgumentsError as exc:
        return _complete(journal, call, str(exc), True)
    key = idempotency_key(journal.state.run_id, call.id)
    journal.record(ToolStarted(call_id=call.id, tool=call.name, idempotency_key=key, attempt=plan.attempt))
    return Ready(call, tool, arguments, plan.attempt, key)


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


def _complete(journal: RunJournal, call: ToolCall, output: str, is_error: bool, duration_ms: int = 0) -> ToolResult:
    journal.record(
        ToolCompleted(call_id=call.id, tool=call.name, output=output, is_error=is_error, duration_ms=duration_ms)
    )
    return ToolResult(call.id, output, is_error)


async def run_together(
    journal: RunJournal, cfg: RuntimeConfig, ready: list[Ready], cancel: CancellationToken | None
) -> AsyncIterator[ToolResult]:
    """Execute the calls in parallel, racing cancellation; yield each result as it is recorded,
    in call order among those that finish together."""
    tasks = {asyncio.ensure_future(_run_one(journal, cfg, item)): item for item in ready}
    waiter = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    try:
        while tasks:
            watch: set[asyncio.Future[object]] = set(tasks)  # type: ignore[arg-type]
            if waiter is not None:
                watch.add(waiter)  # type: ignore[arg-type]
            done, _ = await asyncio.wait(watch, return_when=asyncio.FIRST_COMPLETED)
            finished = [t for t in tasks if t in done]
            for task in sorted(finished, key=lambda t: ready.index(tasks[t])):
                item = tasks.pop(task)
                yield await _finish_call(journal, cfg, item, *task.result())
            if waiter is not None and waiter in done:
                _abandon(journal, cfg, list(tasks.values()))
                for task in tasks:
                    task.cancel()
                return
            if tasks:
                await journal.flush()
    finally:
        if waiter is not None:
            waiter.cancel()
        for task in tasks:  # left only when user code (a hook) raised: the run is failing
            task.cancel()


async def _finish_call(
    journal: RunJournal,
    cfg: RuntimeConfig,
    item: Ready,
    output: str | ToolReturn | ToolSuspended,
    is_error: bool,
    duration_ms: int,
) -> ToolResult:
    call = item.call
    if isinstance(output, ToolSuspended):
        # The call waits, as the run does: for a human (its child's approval) or an operator.
        child = output.child_run_id
        if output.wait == "approval":
            journal.record(
                ApprovalRequested(
                    call_id=call.id, tool=call.name, arguments=call.arguments, reason=output.reason, child_run_id=child
                )
            )
        else:
            journal.record(ToolOutcomeUnknown(call_id=call.id, tool=call.name, child_run_id=child))
        return ToolResult(call.id, output.reason, True)
    if isinstance(output, ToolReturn):
        returned = output
        if returned.handoff_to is not None and returned.child_run_id is not None:
            journal.record(HandedOff(call_id=call.id, agent=returned.handoff_to, to_run_id=returned.child_run_id))
        journal.record(
            ToolCompleted(
                call_id=call.id,
                tool=call.name,
                output=returned.output,
                is_error=returned.is_error,
                duration_ms=duration_ms,
                child_run_id=returned.child_run_id,
                usage=returned.usage or _NO_USAGE,
                cost_usd=returned.cost_usd,
            )
        )
        result = ToolResult(call.id, returned.output, returned.is_error)
    else:
        result = _complete(journal, call, output, is_error, duration_ms)
    if cfg.hooks is not None:
        await cfg.hooks.on_tool_result(item.call, ToolOutput(result.content, result.is_error))
    return result


def _abandon(journal: RunJournal, cfg: RuntimeConfig, running: list[Ready]) -> None:
    """Calls cut short by cancellation: what they did is unknown unless they only read."""
    for item in running:
        if item.tool.traits.rerunnable:
            journal.record(
                ToolCompleted(
                    call_id=item.call.id, tool=item.call.name, output="cancelled before completion", is_error=True
                )
            )
        else:
            journal.record(ToolOutcomeUnknown(call_id=item.call.id, tool=item.call.name))


def _scope(journal: RunJournal, cfg: RuntimeConfig, call_id: str) -> CallScope:
    state = journal.state
    budget = cfg.budget
    if budget is None:
        return CallScope(journal.store, state, call_id)
    usd = None if budget.max_usd is None else max(budget.max_usd - state.cost_usd, 0.0)
    tokens = None if budget.max_tokens is None else max(budget.max_tokens - state.usage.total_tokens, 0)
    return CallScope(journal.store, state, call_id, usd, tokens)


async def _run_one(journal: RunJournal, cfg: RuntimeConfig, item: Ready) -> Outcome:
    """Execute with the retry policy; every attempt after the first is journaled as an intent.

    Only a tool that may run twice (READ, or WRITE declared idempotent) is retried, unless it
    opted in with `@tool(retryable=True)`: a plain WRITE or IRREVERSIBLE call that raised may
    have half-acted, so its error is final.
    """
    policy = None
    if cfg.tool_retry_policy is not None and item.tool.retries_on_error:
        policy = cfg.tool_retry_policy.policy_for(item.tool.name)
    key = item.key
    attempt = item.attempt
    started = time.perf_counter()
    while True:
        ctx = ToolContext(journal.state.run_id, item.call.id, key, attempt)
        token = current_call.set(_scope(journal, cfg, item.call.id))
        try:
            output: str | ToolReturn | ToolSuspended = await item.tool.invoke(item.arguments, ctx)
            failure = None
        except asyncio.CancelledError:
            raise
        except ToolSuspended as suspended:
            output, failure = suspended, None
        except Exception as exc:  # a tool's failure is the model's to see, never the run's end
            output, failure = _describe(exc), exc
        finally:
            current_call.reset(token)
        if failure is None:
            return output, isinstance(output, ToolSuspended), round((time.perf_counter() - started) * 1000)
        if cfg.hooks is not None:
            await cfg.hooks.on_error(failure)
        tries = attempt - item.attempt + 1
        # Arguments the tool refused will not get better by waiting.
        if policy is None or isinstance(failure, ToolArgumentsError) or not policy.should_retry(failure, tries):
            return output, True, round((time.perf_counter() - started) * 1000)
        await asyncio.sleep(policy.delay_for(tries))
        attempt += 1
        journal.record(ToolStarted(call_id=item.call.id, tool=item.call.name, idempotency_key=key, attempt=attempt))
        await journal.flush()


def _describe(exc: Exception) -> str:
    if isinstance(exc, ToolArgumentsError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
