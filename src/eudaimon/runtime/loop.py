"""The one runtime loop. `prompt`, `prompt_stream` and `resume` all drive `drive`.

The loop asks the pure `next_step` what to do, performs that effect, records what happened
and asks again. Because decisions are made from the folded state alone, a run resumed in a
new process after a crash or a human decision continues exactly where the journal says.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, MutableSequence, Sequence
from dataclasses import replace

from eudaimon.core.decide import (
    AwaitApproval,
    AwaitReconciliation,
    CallModel,
    Fail,
    Finish,
    RunTools,
    Stop,
    next_step,
)
from eudaimon.core.errors import ContextTooLong, JournalError, ModelError, ModelRetry
from eudaimon.core.events import (
    BudgetExceeded,
    FailureKind,
    FinishRejected,
    GuardrailRejected,
    ModelCalled,
    ModelFailed,
    RunCancelled,
    RunCompleted,
    RunFailed,
    ToolOutcomeUnknown,
)
from eudaimon.core.groups import estimate_tokens, fit_to_budget
from eudaimon.core.messages import Message, ToolSpec, Usage
from eudaimon.core.state import RunState
from eudaimon.extensions.guardrails import Block, RetryWithFeedback, Transform, run_output_guardrails
from eudaimon.extensions.hooks import LoopState
from eudaimon.models.base import ChatRequest, ChatResponse
from eudaimon.models.history import History
from eudaimon.runtime.call_intents import prepare_batch
from eudaimon.runtime.call_watch import CallCancelled, CallWatch
from eudaimon.runtime.cancel import CancellationToken
from eudaimon.runtime.clock import no_wait
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.context import offered_specs, run_context
from eudaimon.runtime.journal import RunJournal
from eudaimon.runtime.model_calls import ContextRejected, attempt, call
from eudaimon.runtime.tool_calls import OutcomeLost, run_alone, run_together
from eudaimon.streaming import Done, Error, StreamEvent
from eudaimon.streaming import Usage as UsageEvent

logger = logging.getLogger("eudaimon.runtime")

_NO_USAGE = Usage()
"""What a response that reports no usage is billed: one shared value, since `Usage` is frozen."""


async def drive(
    journal: RunJournal,
    cfg: RuntimeConfig,
    *,
    cancel: CancellationToken | None = None,
    stream_model: bool = False,
    emit: bool = True,
) -> AsyncIterator[StreamEvent]:
    """Run until the run completes, fails or waits for a human; yield what happens.

    `stream_model` asks the model for deltas (`prompt_stream`); otherwise each model call is
    one `generate`. With `emit=False` (a caller that wants only the outcome) nothing is built
    or yielded. Either way the events journaled are the same.
    """
    state = journal.state
    # A cancel during a model call closes it (`call_watch`). Not in a Temporal workflow: its
    # replayed history must hold every command, and a cancelled activity would be a new one.
    watch = CallWatch(journal, cancel) if journal.clock.turn is not no_wait else None
    try:
        while True:
            await journal.clock.turn()  # the loop's other callbacks and timers go first if steps ran long
            step = next_step(state, cfg.decide)
            if isinstance(step, CallModel):
                if (cancel is not None or cfg.budget is not None) and _stopped_before_call(journal, cfg, cancel):
                    break
                # Left by another process (read now and then), or seen as a call ended.
                requested = (watch and watch.request) or await journal.cancel_request()
                if requested is not None:
                    journal.record(RunCancelled(reason=requested.reason, by=requested.by))
                    break
                number = step.step
                request, short, started = await _before_call(journal, cfg, number)
                response = short[1] if short is not None else None
                if response is None:
                    try:
                        if stream_model:
                            async for item in attempt(
                                journal,
                                cfg.model,
                                request,
                                step=number,
                                stream=True,
                                retry=cfg.model_retry,
                                offered=cfg.prepared,
                                watch=watch,
                            ):
                                if isinstance(item, ChatResponse):
                                    response = item
                                elif emit:
                                    yield item
                        else:
                            response = await call(
                                journal,
                                cfg.model,
                                request,
                                step=number,
                                retry=cfg.model_retry,
                                offered=cfg.prepared,
                                watch=watch,
                            )
                    except ContextRejected as exc:
                        if emit:
                            yield Error(f"context too long, retrying with a smaller request: {exc}")
                        continue
                    except CallCancelled as exc:
                        journal.record(RunCancelled(reason=exc.request.reason, by=exc.request.by))
                        break
                    finally:
                        if watch is not None:
                            watch.pause()
                    assert response is not None
                    await journal.clock.turn()  # a wave of answers arrives at once: judging them is steps' work
                answered_by = short[0] if short is not None else ""
                for event in await _after_call(journal, cfg, number, request, response, started, emit, answered_by):
                    yield event
            elif isinstance(step, RunTools):
                ready, settled = await prepare_batch(journal, cfg, step)
                if emit:
                    for result in settled:
                        yield result
                try:
                    if len(ready) == 1 and cancel is None:
                        result = await run_alone(journal, cfg, ready[0])
                        if emit:
                            yield result
                    elif ready:
                        async for result in run_together(journal, cfg, ready, cancel):
                            if emit:
                                yield result
                except OutcomeLost:
                    continue  # the call is started and unfinished: `next_step` decides as after a crash
                if cancel is not None and cancel.is_cancelled:
                    journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
                    break
                if not state.pending and cfg.hooks is not None:
                    await cfg.hooks.on_iteration_end(_loop_state(state, cfg, state.steps), run_context(journal))
            elif isinstance(step, Finish):
                await _finish(journal, cfg, step.text)
                if state.status.is_terminal and cfg.hooks is not None:
                    await cfg.hooks.on_iteration_end(_loop_state(state, cfg, state.steps), run_context(journal))
            elif isinstance(step, AwaitReconciliation):
                for unknown in step.outcome_unknown:
                    journal.record(ToolOutcomeUnknown(call_id=unknown.id, tool=unknown.name))
                break
            elif isinstance(step, AwaitApproval | Stop):
                break
            elif isinstance(step, Fail):
                journal.record(RunFailed(error=step.error, kind=step.kind, limit=step.limit))
                break
    except asyncio.CancelledError:
        # Cut short from outside. By a cancelled parent run (the token says so): the journal
        # says so too, unless the cut fell inside a commit (what landed is then unknown; whoever
        # takes the run over reads it). Any other cut (a shutdown) leaves the run as a crash
        # would: resumable.
        if cancel is not None and cancel.is_cancelled and not journal.in_doubt:
            if not state.status.is_terminal:
                journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
            await journal.flush()
        raise
    except JournalError:
        raise  # another process owns the run now, or the store failed: nothing more may be written
    except Exception as exc:
        # A model that failed for good, or user code (a hook, middleware) that raised: record
        # why the run ended, so the journal never shows a run that just stopped, and keep the
        # exception, so the error `prompt` raises in this process has it as its cause.
        journal.failure = exc
        if isinstance(exc, ModelError):
            logger.warning("run %s failed: the model failed: %s: %s", state.run_id, type(exc).__name__, exc)
        else:
            logger.error("run %s failed: %s raised", state.run_id, type(exc).__name__, exc_info=exc)
        if not state.status.is_terminal:
            journal.record(
                RunFailed(error=f"{type(exc).__name__}: {exc}", kind=failure_kind(exc), exception=type(exc).__name__)
            )
        await journal.flush()
        if not isinstance(exc, ModelError) and cfg.hooks is not None:
            try:
                await cfg.hooks.on_error(exc, run_context(journal))
            except Exception:
                logger.exception("an on_error hook raised while reporting %r", exc)
    finally:
        if watch is not None:
            watch.close()
    await journal.flush()
    if not emit:
        return
    if state.error and state.status.is_terminal and state.status != "completed":
        yield Error(state.error)
    yield Done(state.run_id, state.status.value)


def failure_kind(exc: Exception) -> FailureKind:
    """How the journal classifies an exception that ended a run."""
    if isinstance(exc, ContextTooLong):
        return FailureKind.CONTEXT_TOO_LONG
    if isinstance(exc, ModelError):
        return FailureKind.MODEL_ERROR
    return FailureKind.EXCEPTION


def _stopped_before_call(journal: RunJournal, cfg: RuntimeConfig, cancel: CancellationToken | None) -> bool:
    state = journal.state
    if cancel is not None and cancel.is_cancelled:
        journal.record(RunCancelled(reason=cancel.reason, by=cancel.by))
        return True
    breach = cfg.budget.breach(state.cost_usd, state.usage.total_tokens) if cfg.budget is not None else None
    if breach is not None:
        journal.record(BudgetExceeded(reason=breach.reason, spent=breach.spent, limit=breach.limit, unit=breach.unit))
        return True
    return False


def _loop_state(state: RunState, cfg: RuntimeConfig, iteration: int) -> LoopState:
    return LoopState(iteration=iteration, max_iterations=cfg.decide.max_iterations, run_id=state.run_id)


SHARE_FROM = 128
"""A history this long is shared with the request through a `History` view, so a step costs the
same however long the run; a shorter one is copied, which is cheaper than the view's accesses."""


def build_request(state: RunState, cfg: RuntimeConfig, tools: Sequence[ToolSpec] | None = None) -> ChatRequest:
    """The step's request: the run's messages, the tools offered (the agent's, unless a step
    decided otherwise) and the agent's model settings with the run's own merged over them."""
    messages: MutableSequence[Message]
    if state.input_budget_tokens is not None:
        messages = History(fit_to_budget(state.messages, state.input_budget_tokens))
    elif len(state.messages) >= SHARE_FROM:
        messages = History(state.messages)
    else:
        messages = state.messages[:]
    settings = cfg.model_settings if state.model_settings is None else cfg.model_settings.merged(state.model_settings)
    specs = cfg.tool_specs if tools is None else tools
    max_tokens = settings.max_tokens
    if state.output_budget_tokens is not None:
        # A context rejection reserved a smaller output budget for the newest turn to fit.
        max_tokens = min(max_tokens or state.output_budget_tokens, state.output_budget_tokens)
    return ChatRequest(messages, specs, settings.temperature, max_tokens, settings)


async def _before_call(
    journal: RunJournal, cfg: RuntimeConfig, step: int
) -> tuple[ChatRequest, tuple[str, ChatResponse] | None, float]:
    """The request for this step, and (layer, response) when middleware short-circuits the call."""
    if cfg.hooks is not None:
        await cfg.hooks.on_iteration_start(_loop_state(journal.state, cfg, step), run_context(journal, step))
    offered = await offered_specs(journal, cfg, step) if cfg.prepared else None
    request = build_request(journal.state, cfg, offered)
    started = journal.clock.monotonic_ms()
    short = await cfg.middleware.short_circuit_request(request) if cfg.middleware is not None else None
    return request, short, started


_NOTHING: tuple[StreamEvent, ...] = ()


async def _after_call(
    journal: RunJournal,
    cfg: RuntimeConfig,
    step: int,
    request: ChatRequest,
    response: ChatResponse,
    started: float,
    emit: bool,
    answered_by: str = "",
) -> Sequence[StreamEvent]:
    """Judge and journal the model's answer; return the stream events it makes (if `emit`).

    `answered_by` names the middleware layer that answered instead of the model: nothing was
    billed. Otherwise the bill is what the provider reported, whatever `on_response` makes of
    the response.
    """
    billed = response
    if cfg.middleware is not None:
        response = await cfg.middleware.run_on_response(response)
    if cfg.hooks is not None:
        await cfg.hooks.on_model_response(response, run_context(journal, step))
    if answered_by:
        served_by, usage, cost = "", _NO_USAGE, None
    else:
        served_by, usage = billed.model or cfg.model.model_id, billed.usage or _NO_USAGE
        cost = cfg.price(served_by, usage) if cfg.price is not None else None
    message = response.message
    if not message.tool_calls and cfg.output_guardrails:
        verdict = await run_output_guardrails(cfg.output_guardrails, message.content, run_context(journal, step))
        if isinstance(verdict, RetryWithFeedback):
            journal.record(
                GuardrailRejected(
                    step=step,
                    guardrail=verdict.guardrail,
                    feedback=verdict.feedback,
                    usage=usage,
                    cost_usd=cost,
                    model=served_by,
                )
            )
            if not emit:
                return _NOTHING
            return (
                Error(f"answer rejected by an output guardrail: {verdict.feedback}"),
                _usage_event(cfg, served_by, step, request, billed, usage, cost),  # billed all the same
            )
        if isinstance(verdict, Block):
            journal.record(
                ModelFailed(
                    step=step,
                    error=f"blocked by an output guardrail: {verdict.reason}",
                    usage=usage,
                    cost_usd=cost,
                    model=served_by,
                )
            )
            journal.record(
                RunFailed(error=verdict.reason, kind=FailureKind.GUARDRAIL_BLOCKED, guardrail=verdict.guardrail)
            )
            return (_usage_event(cfg, served_by, step, request, billed, usage, cost),) if emit else _NOTHING
        if isinstance(verdict, Transform):
            message = replace(message, content=verdict.text)
    journal.record(
        ModelCalled(
            step=step,
            request_id=journal.state.open_attempt or "",
            message=message,
            usage=usage,
            cost_usd=cost,
            model=served_by,
            duration_ms=round(journal.clock.monotonic_ms() - started),
            stop_reason=str(response.stop_reason),
            short_circuited_by=answered_by,
        )
    )
    return (_usage_event(cfg, served_by, step, request, billed, usage, cost),) if emit else _NOTHING


def _usage_event(
    cfg: RuntimeConfig,
    served_by: str,
    step: int,
    request: ChatRequest,
    response: ChatResponse,
    usage: Usage,
    cost: float | None,
) -> UsageEvent:
    if response.usage is None and served_by:
        # Estimated from characters when the model reported nothing, as the reference does, and
        # priced like a reported usage; the journal keeps only what was observed. The whole
        # request was sent, so the whole request counts: every message and the tool specs.
        usage = Usage(request_tokens(request), estimate_tokens(response.message))
        cost = cfg.price(served_by, usage) if cfg.price is not None else None
    return UsageEvent(step, usage.input_tokens, usage.output_tokens, cost or 0.0)


def request_tokens(request: ChatRequest) -> int:
    """The estimated input tokens of a whole request (~4 characters a token)."""
    tools = sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools)
    return sum(estimate_tokens(m) for m in request.messages) + (tools + 3) // 4


async def _finish(journal: RunJournal, cfg: RuntimeConfig, text: str) -> None:
    """Complete with the final answer, or ask for a corrected one: the schema's complaint
    (ValueError) or an output validator's `ModelRetry` becomes `finish_rejected`."""
    state = journal.state
    if cfg.output_validator is None:
        journal.record(RunCompleted(output=text))
        return
    try:
        output, structured = await cfg.output_validator(text, run_context(journal))
    except ModelRetry as exc:
        journal.record(FinishRejected(step=state.steps, reason=exc.message, by_validator=True))
        return
    except ValueError as exc:
        journal.record(FinishRejected(step=state.steps, reason=str(exc)))
        return
    journal.record(RunCompleted(output=output, structured=structured))
