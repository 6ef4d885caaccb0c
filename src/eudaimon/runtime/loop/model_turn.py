"""A model turn: the request a step sends, and what the loop makes of the model's answer.

`before_call` builds the request (and lets middleware answer it instead); `after_call` passes
the answer through middleware, hooks and output guardrails, bills it, and journals it as
`model_called` (or a rejection). Everything between the two (attempts, retries, the call
itself, a cancel that closes it) is `model_calls`; `loop` only orders them.
"""

from __future__ import annotations

import json
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, replace
from typing import Any

from eudaimon.core.events import FailureKind, GuardrailRejected, ModelCalled, ModelFailed, RunFailed
from eudaimon.core.groups import estimate_tokens, fit_to_budget
from eudaimon.core.messages import NO_USAGE, Message, ToolSpec, Usage
from eudaimon.core.state import RunState
from eudaimon.extensions.guardrails import Block, RetryWithFeedback, Transform, run_output_guardrails
from eudaimon.models.base import ChatRequest, ChatResponse
from eudaimon.models.history import History
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.context import loop_state, offered_specs, run_context
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.streaming import Error, StreamEvent
from eudaimon.streaming import Usage as UsageEvent


@dataclass(slots=True)
class ModelCall:
    """A model call about to be made: its request, and the answer when middleware gave one.

    Never changed once made, and not frozen: a frozen dataclass is made 2.5x slower, once a step.
    """

    step: int
    request: ChatRequest
    started: float
    """When the call started (`Clock.monotonic_ms`), for its `duration_ms`."""
    answer: ChatResponse | None = None
    answered_by: str = ""
    """The middleware layer that answered instead of the model: nothing was billed."""


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
    return ChatRequest(messages, specs, settings.temperature, max_tokens, settings, cfg.structured_output)


async def before_call(journal: RunJournal, cfg: RuntimeConfig, step: int) -> ModelCall:
    """The call this step makes: its request, and the answer when middleware short-circuits it."""
    if cfg.hooks is not None:
        await cfg.hooks.on_iteration_start(loop_state(journal.state, cfg, step), run_context(journal, step))
    offered = await offered_specs(journal, cfg, step) if cfg.prepared else None
    request = build_request(journal.state, cfg, offered)
    started = journal.clock.monotonic_ms()
    if cfg.middleware is not None and (short := await cfg.middleware.short_circuit_request(request)) is not None:
        return ModelCall(step, request, started, short[1], short[0])
    return ModelCall(step, request, started)


_NOTHING: tuple[StreamEvent, ...] = ()


async def after_call(
    journal: RunJournal, cfg: RuntimeConfig, call: ModelCall, answer: ChatResponse, emit: bool
) -> Sequence[StreamEvent]:
    """Judge and journal the model's answer; return the stream events it makes (if `emit`).

    An answer from middleware (`call.answered_by`) was not billed. Otherwise the bill is what
    the provider reported, whatever `on_response` makes of the response.
    """
    response = answer
    if cfg.middleware is not None:
        response = await cfg.middleware.run_on_response(response)
    if cfg.hooks is not None:
        await cfg.hooks.on_model_response(response, run_context(journal, call.step))
    if call.answered_by:
        served_by, usage, cost = "", NO_USAGE, None
    else:
        served_by, usage = answer.model or cfg.model.model_id, answer.usage or NO_USAGE
        cost = cfg.price(served_by, usage) if cfg.price is not None else None
    message = response.message
    if not message.tool_calls and cfg.output_guardrails:
        verdict = await run_output_guardrails(cfg.output_guardrails, message.content, run_context(journal, call.step))
        if isinstance(verdict, Transform):
            message = replace(message, content=verdict.text)
        elif isinstance(verdict, RetryWithFeedback | Block):
            billed = {"usage": usage, "cost_usd": cost, "model": served_by}  # billed all the same
            rejected = _rejected(journal, call.step, verdict, billed)
            return (*rejected, _usage_event(cfg, call, answer, served_by, usage, cost)) if emit else _NOTHING
    journal.record(
        ModelCalled(
            step=call.step,
            request_id=journal.state.open_attempt or "",
            message=message,
            usage=usage,
            cost_usd=cost,
            model=served_by,
            duration_ms=round(journal.clock.monotonic_ms() - call.started),
            stop_reason=str(response.stop_reason),
            short_circuited_by=call.answered_by,
        )
    )
    return (_usage_event(cfg, call, answer, served_by, usage, cost),) if emit else _NOTHING


def _rejected(
    journal: RunJournal, step: int, verdict: RetryWithFeedback | Block, billed: dict[str, Any]
) -> tuple[StreamEvent, ...]:
    """Journal an answer an output guardrail rejected, with its bill: asked again, or the run fails."""
    if isinstance(verdict, RetryWithFeedback):
        journal.record(GuardrailRejected(step=step, guardrail=verdict.guardrail, feedback=verdict.feedback, **billed))
        return (Error(f"answer rejected by an output guardrail: {verdict.feedback}"),)
    journal.record(ModelFailed(step=step, error=f"blocked by an output guardrail: {verdict.reason}", **billed))
    journal.record(RunFailed(error=verdict.reason, kind=FailureKind.GUARDRAIL_BLOCKED, guardrail=verdict.guardrail))
    return ()


def _usage_event(
    cfg: RuntimeConfig, call: ModelCall, answer: ChatResponse, served_by: str, usage: Usage, cost: float | None
) -> UsageEvent:
    if answer.usage is None and served_by:
        # Estimated from characters when the model reported nothing, as the reference does, and
        # priced like a reported usage; the journal keeps only what was observed. The whole
        # request was sent, so the whole request counts: every message and the tool specs.
        usage = Usage(request_tokens(call.request), estimate_tokens(answer.message))
        cost = cfg.price(served_by, usage) if cfg.price is not None else None
    return UsageEvent(call.step, usage.input_tokens, usage.output_tokens, cost or 0.0)


def request_tokens(request: ChatRequest) -> int:
    """The estimated input tokens of a whole request (~4 characters a token)."""
    tools = sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools)
    return sum(estimate_tokens(m) for m in request.messages) + (tools + 3) // 4
