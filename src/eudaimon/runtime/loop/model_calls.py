"""One model attempt: journaled before the call, retried before content, classified after.

`model_attempt_started` is committed before the model is called, so an attempt without an
outcome in the journal is known to have been interrupted. A retryable failure before any
content arrived is retried after a jittered exponential backoff that honours the provider's
Retry-After, and every retry is journaled. Once content has arrived nothing is retried
silently: the failure is journaled and the run fails.

A context rejection ("the request is too long") is retried a few times, each time with a
smaller request: fewer history groups, or a smaller output budget when the newest turn alone
fills the window. When no smaller request is possible, or the retries run out, the run fails
with `ContextTooLong` instead of asking again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

from eudaimon.core.digest import canonical_json, specs_digest
from eudaimon.core.errors import ContextTooLong, InvalidEvent, ModelError, ModelResponseInvalid, ModelRetryableError
from eudaimon.core.events import (
    ModelAttemptStarted,
    ModelCalled,
    ModelContextRejected,
    ModelFailed,
    ModelRetryScheduled,
)
from eudaimon.core.groups import estimate_tokens, fit_to_budget
from eudaimon.core.messages import Message, Usage
from eudaimon.core.settings import NO_SETTINGS
from eudaimon.core.validity import check_payload
from eudaimon.models.base import ChatRequest, ChatResponse, Model, ModelStreamItem
from eudaimon.models.output import settle
from eudaimon.runtime.loop.call_watch import CallWatch
from eudaimon.runtime.loop.config import RetrySettings
from eudaimon.runtime.loop.journal import RunJournal, observers
from eudaimon.runtime.loop.observe import model_answered
from eudaimon.runtime.loop.signals import LoopSignal
from eudaimon.streaming import Error


class ContextRejected(LoopSignal):
    """Internal: the provider refused the request as too long; the rejection is journaled."""


def request_digest(request: ChatRequest, state_messages: int, last_id: str) -> str:
    """Identifies a request without hashing the whole history: within a run, messages are
    append-only with stable ids, so the count and the last id name the history's prefix. The
    model settings the call uses are part of it."""
    tools = ",".join([t.name for t in request.tools])
    key = f"{state_messages}|{len(request.messages)}|{last_id}|{tools}|{request.temperature}|{request.max_tokens}"
    if request.settings is not NO_SETTINGS:
        key = f"{key}|{canonical_json(request.settings.as_dict())}"
    return hashlib.sha256(key.encode()).hexdigest()


async def attempt(
    journal: RunJournal,
    model: Model,
    request: ChatRequest,
    *,
    step: int,
    stream: bool,
    retry: RetrySettings,
    offered: bool = False,
    watch: CallWatch | None = None,
) -> AsyncIterator[ModelStreamItem | Error]:
    """Call the model, yielding deltas as they arrive, an `Error` for each retry, and the
    `ChatResponse` last.

    Raises `ContextRejected` after journaling a context rejection, or the `ModelError` after
    journaling `model_failed`; with a `watch`, `CallCancelled` when a cancel closed the call
    or ended its backoff.
    """
    if not stream:
        yield await call(journal, model, request, step=step, retry=retry, offered=offered, watch=watch)
        return
    request_id = await _start(journal, model, request, step, offered)
    retries = 0
    while True:
        content_seen = False
        try:
            response: ChatResponse | None = None
            items = model.stream(request)
            async for item in items if watch is None else watch.stream(items):
                if isinstance(item, ChatResponse):
                    response = item
                else:
                    content_seen = True
                    yield item
            if response is None:
                raise ModelResponseInvalid("the model's stream ended without a response", model=model.model_id)
            checked = checked_response(settle(response, request.output), model)
            if observers:
                model_answered(journal, request, checked, None)
            yield checked
            return
        except ModelError as exc:
            if observers:
                model_answered(journal, request, None, exc)
            retries = await _after_failure(
                journal, model, request, exc, step, request_id, retries, retry, content_seen, watch
            )
            yield Error(f"model call failed ({type(exc).__name__}: {exc}); retry {retries} of {retry.max_retries}")


async def call(
    journal: RunJournal,
    model: Model,
    request: ChatRequest,
    *,
    step: int,
    retry: RetrySettings,
    offered: bool = False,
    watch: CallWatch | None = None,
) -> ChatResponse:
    """`attempt` without streaming: the same records and retries, and no generator to drive,
    since nothing arrives before the response."""
    request_id = await _start(journal, model, request, step, offered)
    retries = 0
    while True:
        try:
            answer = model.generate(request)
            checked = checked_response(
                settle(await (answer if watch is None else watch.run(answer)), request.output), model
            )
            if observers:
                model_answered(journal, request, checked, None)
            return checked
        except ModelError as exc:
            if observers:
                model_answered(journal, request, None, exc)
            retries = await _after_failure(journal, model, request, exc, step, request_id, retries, retry, False, watch)


def checked_response(response: object, model: Model) -> ChatResponse:
    """`response` if it can be journaled as the attempt's `model_called`; else the attempt
    fails with `ModelResponseInvalid` (journaled as `model_failed`), and no tool runs.

    A model or a provider conversion may return a tool call with an int id or no name, list
    arguments, `content=None` or float token counts: written as they are, such a row would not
    read back, and every later reader of the run would fail. Tool calls given as a list rather
    than a tuple are taken as the tuple they mean.
    """
    if not isinstance(response, ChatResponse):
        raise ModelResponseInvalid(
            f"the model returned {type(response).__name__}, not a ChatResponse", model=model.model_id
        )
    message = response.message
    calls: object = getattr(message, "tool_calls", ())
    if type(message) is Message and isinstance(calls, list):
        message = replace(message, tool_calls=tuple(calls))
        response = replace(response, message=message)
    observed = ModelCalled(
        step=0,
        request_id="",
        message=message,
        usage=Usage() if response.usage is None else response.usage,
        model="" if response.model is None else response.model,
    )
    try:
        check_payload(observed)
    except InvalidEvent as exc:
        raise ModelResponseInvalid(
            f"the model's response cannot be journaled: {exc.problem}", model=model.model_id
        ) from None
    return response


async def _start(journal: RunJournal, model: Model, request: ChatRequest, step: int, offered: bool) -> str:
    """Commit `model_attempt_started`: the attempt is durable before the model is called.

    With `offered` (tools decided per step) it names the specs sent, and carries them when
    they differ from the previous attempt's.
    """
    state = journal.state
    request_id = journal.clock.new_request_id()
    messages = state.messages
    tools_digest, tools = "", None
    if offered:
        sent = tuple(request.tools)
        tools_digest = specs_digest(sent)
        tools = sent if tools_digest != state.tools_digest else None
    journal.record(
        ModelAttemptStarted(
            step=step,
            request_id=request_id,
            request_digest=request_digest(request, len(messages), messages[-1].id if messages else ""),
            model=model.model_id,
            tools_digest=tools_digest,
            tools=tools,
        )
    )
    await journal.flush()
    return request_id


async def _after_failure(
    journal: RunJournal,
    model: Model,
    request: ChatRequest,
    exc: ModelError,
    step: int,
    request_id: str,
    retries: int,
    retry: RetrySettings,
    content_seen: bool,
    watch: CallWatch | None = None,
) -> int:
    """Journal a failed call and wait out its backoff, returning the retries made so far; or
    raise when the failure is final (after content, out of retries, or not retryable)."""
    if isinstance(exc, ModelRetryableError):
        if content_seen or retries >= retry.max_retries:
            _fail(journal, step, request_id, model, exc, content_seen)
            raise exc
        retries += 1
        delay = retry.delay_for(retries, getattr(exc, "retry_after_s", None), journal.clock.random)
        journal.record(
            ModelRetryScheduled(
                step=step, request_id=request_id, retry_number=retries, delay_ms=round(delay * 1000), error=str(exc)
            )
        )
        await journal.flush()
        await (asyncio.sleep(delay) if watch is None else watch.sleep(delay))
        return retries
    if isinstance(exc, ContextTooLong):
        rejected = journal.state.context_rejections + 1
        smaller = smaller_request(journal.state.messages, request, exc)
        if smaller is None or rejected > retry.max_context_retries:
            why = (
                "no smaller request is possible" if smaller is None else f"{rejected - 1} smaller requests were refused"
            )
            _fail(journal, step, request_id, model, exc, False, f" ({why})")
            raise exc
        journal.record(
            ModelContextRejected(
                step=step,
                request_id=request_id,
                input_budget_tokens=smaller[0],
                output_budget_tokens=smaller[1],
                retry_number=rejected,
                error=str(exc),
            )
        )
        raise ContextRejected(str(exc)) from exc
    _fail(journal, step, request_id, model, exc, content_seen)
    raise exc


def _fail(
    journal: RunJournal,
    step: int,
    request_id: str,
    model: Model,
    exc: ModelError,
    content_seen: bool,
    why: str = "",
) -> None:
    after = " after content had arrived" if content_seen else ""
    journal.record(
        ModelFailed(
            step=step, error=f"{type(exc).__name__}{after}: {exc}{why}", request_id=request_id, model=model.model_id
        )
    )


_OUTPUT_MARGIN = 64
"""Tokens left between the input and the output budget, for the estimate's error."""


def smaller_budget(request: ChatRequest, exc: ContextTooLong) -> int:
    """An input budget smaller than what was refused, within the window the provider reported."""
    sent = sum(estimate_tokens(m) for m in request.messages)
    budget = int(sent * 0.75)
    if exc.limit_tokens:
        budget = min(budget, exc.limit_tokens - (request.max_tokens or 0) - _OUTPUT_MARGIN)
    return max(budget, 1)


def smaller_request(
    messages: Sequence[Message], request: ChatRequest, exc: ContextTooLong
) -> tuple[int, int | None] | None:
    """The (input, output) budgets of a request smaller than the refused one, or None when none
    is: the history left to drop is gone and the output budget cannot shrink either.

    The input budget is tried first: the request the loop builds next keeps fewer history
    groups (`fit_to_budget` on the run's messages, as `build_request` does). When that request
    would be no smaller, because the newest turn alone is what did not fit, the output budget
    (`max_tokens`) is cut to what the provider's reported window leaves.
    """
    sent = sum(estimate_tokens(m) for m in request.messages)
    budget = smaller_budget(request, exc)
    if sum(estimate_tokens(m) for m in fit_to_budget(messages, budget)) < sent:
        return budget, request.max_tokens
    if exc.limit_tokens and request.max_tokens:
        room = exc.limit_tokens - sent - _OUTPUT_MARGIN
        if 0 < room < request.max_tokens:
            return budget, room
    return None
