"""Executing one batch of tool calls whose intents `call_intents` journaled: in parallel,
racing cancellation, with the retry policy, results recorded in call order.

Completions of calls that changed something are committed as they arrive while siblings still
run; the last one rides with the next model attempt's record. A call cut short by
cancellation is an error result if it only read, else an unknown outcome.

A datasource call whose datasource stayed unreachable after a try that may have committed
(`DatasourceOutcomeUnknown`) gets no result either: whether it committed is not known, so it is
not answered to the model as an error. The run stops with the call started and unfinished, as
a crash leaves it; resumed, the call's next attempt looks up its completion record and runs
only if it did not commit. When no commit can have landed, the unreachable datasource is the
call's error result, which is then the truth (`DatasourceUnreachable.maybe_committed`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from eudaimon.core.errors import ModelRetry
from eudaimon.core.events import (
    ApprovalRequested,
    HandedOff,
    ToolCompleted,
    ToolOutcomeUnknown,
    ToolStarted,
    ToolWaiting,
)
from eudaimon.core.messages import ContentPart, Usage
from eudaimon.datasources import DatasourceOutcomeUnknown, DatasourceUnreachable
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.runtime.loop.call_intents import Ready, complete, must_commit_first
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.loop.clock import SYSTEM_CLOCK, Clock
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.context import run_context
from eudaimon.runtime.loop.datasource_calls import Committed, run_in_transaction
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.scope import CallScope, current_call
from eudaimon.runtime.loop.signals import LoopSignal
from eudaimon.streaming import ToolResult
from eudaimon.tools import RetryAfter, Tool, ToolArgumentsError, ToolContext, ToolReturn, ToolSuspended

_NO_USAGE = Usage()
CANCELLED_CALLS_WAIT_S = 5.0
"""How long a cancelled run waits for its calls in flight to stop once cut short: a plain tool
stops at its next await, a child run after journaling its own `run_cancelled`."""


class OutcomeLost(LoopSignal):
    """Raised by a tool's executor when it lost track of a started call that may have acted
    (a Temporal worker died or timed out mid-activity, and the call may not run twice).

    The loop then records nothing for the call and asks `next_step` again, which treats the
    call exactly as crash recovery does: `tool_outcome_unknown`, and the run waits for
    reconciliation.
    """


@dataclass(frozen=True, slots=True)
class Outcome:
    """What executing a call gave: its text, whether it failed, its parts, a `ModelRetry`."""

    output: str
    is_error: bool
    duration_ms: int
    parts: tuple[ContentPart, ...] = ()
    retry: bool = False
    returned: ToolReturn | None = None
    """A child run's result: its run id, usage and cost (an agent used as a tool, a handoff)."""
    suspended: ToolSuspended | None = None
    """The call must wait: for a human, or an operator settling an unknown outcome."""
    datasource: str | None = None
    """The datasource the call committed in, with its completion record."""
    recovered: bool = False
    """The result was read back from the datasource's completion record, not run again."""
    waited: RetryAfter | None = None
    """The tool asked to run again later (`RetryAfter`), at this `attempt`."""
    attempt: int = 0


async def run_alone(journal: RunJournal, cfg: RuntimeConfig, item: Ready) -> ToolResult:
    """Execute one call, with nothing to race it against, in the caller's task, and record its
    result: `run_together` without a task, a queue and callbacks."""
    return await _finish_call(journal, cfg, item, await _run_one(journal, cfg, item))


async def run_together(
    journal: RunJournal, cfg: RuntimeConfig, ready: list[Ready], cancel: CancellationToken | None
) -> AsyncIterator[ToolResult]:
    """Execute the calls in parallel, racing cancellation; yield each result as it is recorded,
    in call order among those that finish together.

    A call whose executor lost its outcome (`OutcomeLost`), or whose datasource stayed
    unreachable after it may have committed (`DatasourceOutcomeUnknown`), gets no result; its
    siblings finish, then that exception is raised: for the loop to treat the call as recovery
    does, or to stop the run.
    """
    tasks = {asyncio.ensure_future(_run_one(journal, cfg, item, cancel)): item for item in ready}
    waiter = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    # Finished futures queue up in the order they finish: `asyncio.wait` without its sets,
    # whose order a Temporal workflow's sandbox rightly flags as non-deterministic.
    finished: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()
    for future in (*tasks, *((waiter,) if waiter is not None else ())):
        future.add_done_callback(finished.put_nowait)
    lost: OutcomeLost | DatasourceOutcomeUnknown | None = None
    try:
        while tasks:
            done = [await finished.get()]
            while not finished.empty():
                done.append(finished.get_nowait())
            changed = False  # whether a call that finished now may have changed something
            for task in sorted((t for t in done if t in tasks), key=lambda t: ready.index(tasks[t])):
                item = tasks.pop(task)
                changed = changed or journal.replayed or must_commit_first(item.tool)
                try:
                    outcome = task.result()
                except (OutcomeLost, DatasourceOutcomeUnknown) as exc:
                    lost = exc
                    continue
                yield await _finish_call(journal, cfg, item, outcome)
            if waiter is not None and waiter in done:
                _abandon(journal, cfg, list(tasks.values()))
                for task in tasks:
                    task.cancel()
                if tasks and not journal.replayed:
                    # A child run (an agent used as a tool) journals its own end as it stops.
                    await asyncio.wait(tasks, timeout=CANCELLED_CALLS_WAIT_S)
                return
            if tasks and changed:
                await journal.flush()  # its result is durable while its siblings still run
        if lost is not None:
            raise lost
    finally:
        if waiter is not None:
            waiter.cancel()
        for task in tasks:  # left only when user code (a hook) raised: the run is failing
            task.cancel()


async def _finish_call(journal: RunJournal, cfg: RuntimeConfig, item: Ready, outcome: Outcome | None) -> ToolResult:
    call = item.call
    if outcome is None:
        journal.record(ToolOutcomeUnknown(call_id=call.id, tool=call.name))
        return ToolResult(call.id, "timed out: the outcome is unknown until an operator reconciles it", True)
    suspended, returned = outcome.suspended, outcome.returned
    if outcome.waited is not None:
        waited = _wait(journal, cfg, item, outcome)
        if isinstance(waited, ToolResult):
            return waited
        outcome = waited
    if suspended is not None:
        # The call waits, as the run does: for a human (its child's approval) or an operator.
        child = suspended.child_run_id
        if suspended.wait == "approval":
            journal.record(
                ApprovalRequested(
                    call_id=call.id,
                    tool=call.name,
                    arguments=call.arguments,
                    reason=suspended.reason,
                    child_run_id=child,
                )
            )
        else:
            journal.record(ToolOutcomeUnknown(call_id=call.id, tool=call.name, child_run_id=child))
        return ToolResult(call.id, suspended.reason, True)
    if returned is not None:
        if returned.handoff_to is not None and returned.child_run_id is not None:
            journal.record(HandedOff(call_id=call.id, agent=returned.handoff_to, to_run_id=returned.child_run_id))
        journal.record(
            ToolCompleted(
                call_id=call.id,
                tool=call.name,
                output=returned.output,
                is_error=returned.is_error,
                duration_ms=outcome.duration_ms,
                child_run_id=returned.child_run_id,
                usage=returned.usage or _NO_USAGE,
                cost_usd=returned.cost_usd,
            )
        )
        result = ToolResult(call.id, returned.output, returned.is_error)
    else:
        if outcome.retry:
            outcome = _correction(journal, item.tool, outcome)
        result = complete(
            journal,
            call,
            outcome.output,
            is_error=outcome.is_error,
            duration_ms=outcome.duration_ms,
            parts=outcome.parts,
            retry=outcome.retry,
            datasource=outcome.datasource,
            recovered=outcome.recovered,
        )
    output, is_error = result.content, result.is_error
    if cfg.hooks is not None:
        await cfg.hooks.on_tool_result(call, ToolOutput(output, is_error), run_context(journal, call_id=call.id))
    return ToolResult(call.id, output, is_error)


def _wait(journal: RunJournal, cfg: RuntimeConfig, item: Ready, outcome: Outcome) -> ToolResult | Outcome:
    """Journal a durable wait (`tool_waiting`) for a tool that raised `RetryAfter`; when the
    call has waited `max_waits` times already, the outcome is instead an error the model reads."""
    waited, call = outcome.waited, item.call
    assert waited is not None
    progress = journal.state.calls.get(call.id)
    if progress is not None and progress.waits >= cfg.max_waits:
        said = (
            f"the tool asked to wait again ({outcome.output}), but the call has waited max_waits={cfg.max_waits} times"
        )
        return replace(outcome, output=said, waited=None)
    wake_at = journal.clock.now() + timedelta(seconds=waited.seconds)
    reason = waited.reason or ""
    journal.record(
        ToolWaiting(call_id=call.id, tool=call.name, attempt=outcome.attempt, wake_at=wake_at, reason=reason)
    )
    return ToolResult(call.id, f"waiting until {wake_at.isoformat()}: {outcome.output}", True)


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


async def _run_one(
    journal: RunJournal, cfg: RuntimeConfig, item: Ready, cancel: CancellationToken | None = None
) -> Outcome | None:
    """Execute with the retry policy; every attempt after the first is journaled as an intent.

    Only a tool that may run twice (READ, or WRITE declared idempotent) is retried, unless it
    opted in with `@tool(retryable=True)`: a plain WRITE or IRREVERSIBLE call that raised may
    have half-acted, so its error is final. A call that outlives its timeout is abandoned: an
    error result if it may run twice, else None, an unknown outcome for an operator to
    reconcile (it may have acted, or may still act: a sync tool's thread cannot be stopped).
    """
    policy = None
    if cfg.tool_retry_policy is not None and item.tool.retries_on_error:
        policy = cfg.tool_retry_policy.policy_for(item.tool.name)
    attempt = item.attempt
    started = journal.clock.monotonic_ms()
    while True:
        tried = await _attempt(journal, cfg, item, attempt, started, cancel)
        if not isinstance(tried, Exception):
            return tried
        tries = attempt - item.attempt + 1
        # Arguments the tool refused will not get better by waiting.
        if policy is None or isinstance(tried, ToolArgumentsError) or not policy.should_retry(tried, tries):
            return Outcome(_describe(tried), True, _ms_since(started, journal.clock))
        await asyncio.sleep(policy.delay_for(tries))
        attempt += 1
        call = item.call
        journal.record(
            ToolStarted(
                call_id=call.id,
                tool=call.name,
                idempotency_key=item.key,
                attempt=attempt,
                arguments=call.arguments,
                effect=item.tool.effect.value,
                datasource=item.tool.datasource,
            )
        )
        if journal.replayed or must_commit_first(item.tool):
            await journal.flush()


async def _attempt(
    journal: RunJournal, cfg: RuntimeConfig, item: Ready, attempt: int, started: float, cancel: CancellationToken | None
) -> Outcome | Exception | None:
    """One execution of the call: what it gave; None when it outlived its timeout and may not
    run twice; else the exception it raised (reported to `on_error`), for the retry policy."""
    state, clock, tool = journal.state, journal.clock, item.tool
    ctx = ToolContext(
        state.run_id, item.call.id, item.key, attempt, journal.deps, state.steps, fencing_token=journal.fencing_token
    )
    if journal.effect_guard is not None and not tool.traits.rerunnable:
        journal.effect_guard(journal.committed_at)  # the last moment to find out this process was replaced
    timeout_s = tool.timeout_s if tool.timeout_s is not None else cfg.tool_timeout_s
    deadline = asyncio.timeout(timeout_s) if timeout_s is not None else None  # a timeout costs 2 µs
    token = current_call.set(_scope(journal, cfg, item.call.id, cancel))
    try:
        if tool.datasource is not None and tool.transacts_here:
            try:
                if deadline is None:
                    done = await run_in_transaction(cfg.datasources[tool.datasource], tool, item.arguments, ctx)
                else:
                    async with deadline:
                        done = await run_in_transaction(cfg.datasources[tool.datasource], tool, item.arguments, ctx)
            except DatasourceUnreachable as exc:
                if not exc.maybe_committed:  # proven: no try reached a commit, none before it
                    raise
                raise _unreachable(state.run_id, item, exc) from exc
            ms = _ms_since(started, clock)
            return Outcome(
                done.output, done.is_error, ms, done.parts, datasource=tool.datasource, recovered=done.recovered
            )
        if deadline is None:
            output, parts = await tool.execute(item.arguments, ctx)
        else:
            async with deadline:
                output, parts = await tool.execute(item.arguments, ctx)
        ms = _ms_since(started, clock)
        if isinstance(output, Committed):  # committed by a Temporal worker, maybe read back from its record
            return Outcome(
                output.output, output.is_error, ms, parts, datasource=tool.datasource, recovered=output.recovered
            )
        if isinstance(output, ToolReturn):
            return Outcome(output.output, output.is_error, ms, returned=output)
        # A datasource tool run by a Temporal worker committed there, in its activity.
        return Outcome(output, False, ms, parts, datasource=tool.datasource)
    except (asyncio.CancelledError, OutcomeLost, DatasourceOutcomeUnknown):
        raise
    except ToolSuspended as exc:
        return Outcome(exc.reason, True, _ms_since(started, clock), suspended=exc)
    except RetryAfter as exc:
        return Outcome(str(exc), True, _ms_since(started, clock), waited=exc, attempt=attempt)
    except ModelRetry as exc:
        return Outcome(exc.message, True, _ms_since(started, clock), retry=True)  # budget: `_correction`
    except (SystemExit, KeyboardInterrupt) as exc:  # a tool may not end the host process
        if cfg.hooks is not None:
            await cfg.hooks.on_error(exc, ctx)
        return Outcome(
            f"{type(exc).__name__}: the tool tried to stop the process ({exc})", True, _ms_since(started, clock)
        )
    except Exception as exc:  # a tool's failure is the model's to see, never the run's end
        if isinstance(exc, TimeoutError) and deadline is not None and deadline.expired():
            if not tool.traits.rerunnable:
                return None
            exc = TimeoutError(f"the tool did not finish within timeout_s={timeout_s:g}")
        if cfg.hooks is not None:
            await cfg.hooks.on_error(exc, ctx)
        return exc
    finally:
        # A coroutine torn down from outside (a Temporal worker evicting a closed workflow)
        # ends in another context, where the token means nothing: there is nothing to reset.
        with contextlib.suppress(ValueError):
            current_call.reset(token)


def _unreachable(run_id: str, item: Ready, exc: DatasourceUnreachable) -> DatasourceOutcomeUnknown:
    """The error that stops a local run whose datasource call could not reach its datasource
    after a try that may have committed.

    Not the model's to see: a try's commit was cut off (its answer lost) and the tries since
    could not look it up, or an earlier attempt's could not be, so whether the call committed
    is not known; an error result would be a guess, and a model told "failed" may write again.
    """
    tool = item.tool
    return DatasourceOutcomeUnknown(
        f"run {run_id}: the datasource {tool.datasource!r} stayed unreachable for call {item.call.id} "
        f"({tool.name}), so whether the call committed is not known; the run stopped without an answer for it. "
        f"Resume the run once the datasource is back: the call is looked up first and runs only if it did not "
        f"commit. Last failure: {exc}"
    )


def _scope(journal: RunJournal, cfg: RuntimeConfig, call_id: str, cancel: CancellationToken | None) -> CallScope:
    state = journal.state
    budget = cfg.budget
    if budget is None:
        return CallScope(journal.store, state, call_id, cancel=cancel)
    usd = None if budget.max_usd is None else max(budget.max_usd - state.cost_usd, 0.0)
    tokens = None if budget.max_tokens is None else max(budget.max_tokens - state.usage.total_tokens, 0)
    return CallScope(journal.store, state, call_id, usd, tokens, cancel)


def _correction(journal: RunJournal, tool: Tool, asked: Outcome) -> Outcome:
    """A `ModelRetry`: the tool's correction for the model, while its budget lasts.

    The budget counts corrections in a row (a success resets it), from the journal, so a
    resumed run spends the same budget. It is judged as the result is recorded, not as the tool
    raised: calls of one batch run together, and each must see the corrections recorded before
    it. Once spent, the model gets an error result saying so, rather than the run failing: a
    tool's trouble is the model's to handle.
    """
    spent = journal.state.tool_retries.get(tool.name, 0)
    if spent >= tool.max_retries:
        return Outcome(
            f"{asked.output}\n(Tool {tool.name!r} asked for a correction {spent + 1} times in a row and its retry "
            f"budget, max_retries={tool.max_retries}, is spent: do not call it again for this.)",
            True,
            asked.duration_ms,
        )
    return asked


def _ms_since(started: float, clock: Clock = SYSTEM_CLOCK) -> int:
    return round(clock.monotonic_ms() - started)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ToolArgumentsError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
