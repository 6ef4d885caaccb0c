"""Context rejections ("the request is too long") are retried a few times, each attempt smaller
than the last, and journaled with their retry number and output budget; a request that cannot
shrink fails the run with `ContextTooLong` instead of asking for ever."""

from __future__ import annotations

import itertools

import pytest

from eudaimon import Agent, Message
from eudaimon.core.events import FailureKind, ModelContextRejected, RunFailed
from eudaimon.core.groups import estimate_tokens
from eudaimon.errors import ContextExhausted, ContextTooLong, RunError
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.loop.config import RetrySettings
from eudaimon.stores import MemoryStore


def _size(request: ChatRequest) -> int:
    return sum(estimate_tokens(m) for m in request.messages)


async def test_a_request_that_cannot_shrink_fails_with_context_too_long() -> None:
    """Bug: a provider that kept answering "context too long" when the newest turn alone did not
    fit made a run journal 535,679 attempts in 30 s. Now: at most a few smaller attempts, then
    the run fails with `ContextTooLong` (also a `RunError` naming the run), journaled as such."""
    sent: list[int] = []

    def refuse(request: ChatRequest) -> str:
        sent.append(_size(request))
        raise ContextTooLong("maximum context length is 100 tokens", limit_tokens=100)

    store = MemoryStore()
    agent = Agent(FunctionModel(refuse), store=store, memory=None)
    history = [Message.user("old " * 200, id="u1"), Message.assistant("old answer " * 100, id="a1")]
    with pytest.raises(ContextTooLong) as info:
        await agent.prompt_with_messages([*history, Message.user("the newest turn " * 100, id="u2")])
    assert isinstance(info.value, RunError) and isinstance(info.value, ContextExhausted)
    events = await store.load(info.value.run_id or "")
    rejections = [e.data for e in events if isinstance(e.data, ModelContextRejected)]
    assert 1 <= len(rejections) <= RetrySettings().max_context_retries
    assert [r.retry_number for r in rejections] == list(range(1, len(rejections) + 1))
    assert all(later < earlier for earlier, later in itertools.pairwise(sent)), sent
    assert len(sent) == len(rejections) + 1, "one last attempt that could not shrink, then no more"
    assert [e.type for e in events][-2:] == ["model_failed", "run_failed"]
    failed = events[-1].data
    assert isinstance(failed, RunFailed) and failed.kind is FailureKind.CONTEXT_TOO_LONG
    state = await agent.state(events[-1].run_id)
    assert state.error_kind == "ContextTooLong"


async def test_retries_stop_at_the_cap_even_while_requests_still_shrink() -> None:
    """Invariant: however much history is left to drop, a step makes at most
    `max_context_retries` smaller attempts after the first rejection."""
    calls: list[int] = []

    def refuse(request: ChatRequest) -> str:
        calls.append(_size(request))
        raise ContextTooLong("too long")

    store = MemoryStore()
    agent = Agent(FunctionModel(refuse), store=store, memory=None)
    history = [Message.user(f"turn {i} " * 50, id=f"u{i}") for i in range(60)]
    with pytest.raises(ContextExhausted) as info:
        await agent.prompt_with_messages(history)
    cap = RetrySettings().max_context_retries
    assert len(calls) == cap + 1
    events = await store.load(info.value.run_id or "")
    assert [e.data.retry_number for e in events if isinstance(e.data, ModelContextRejected)] == list(range(1, cap + 1))


async def test_a_rejection_that_history_can_absorb_is_retried_smaller_and_journaled() -> None:
    """Invariant: a rejection is journaled (retry_number 1, the input budget, the output budget in
    effect) and the next attempt drops old history, keeping the newest turn; the run completes."""
    sizes: list[int] = []

    def fit(request: ChatRequest) -> str:
        sizes.append(_size(request))
        if _size(request) > 300:
            raise ContextTooLong("too long", limit_tokens=400)
        return "answered"

    store = MemoryStore()
    agent = Agent(FunctionModel(fit), store=store, memory=None, max_tokens=50)
    history = [Message.user(f"old turn {i} " * 40, id=f"u{i}") for i in range(6)]
    response = await agent.prompt_with_messages([*history, Message.user("and now?", id="now")])
    assert response.text() == "answered"
    assert sizes[0] > 300 >= sizes[-1] and len(sizes) == 2
    events = await store.load(response.run_id)
    (rejected,) = [e.data for e in events if isinstance(e.data, ModelContextRejected)]
    assert (rejected.retry_number, rejected.output_budget_tokens) == (1, 50)
    assert rejected.input_budget_tokens < sizes[0]


async def test_when_the_newest_turn_fills_the_window_the_output_budget_shrinks() -> None:
    """Invariant: with no history left to drop, an attempt is made smaller by its output budget:
    the provider's window minus the input. The event records it and the next request asks for it."""
    asked: list[int | None] = []

    def window(request: ChatRequest) -> str:
        asked.append(request.max_tokens)
        if _size(request) + (request.max_tokens or 0) > 1000:
            raise ContextTooLong("input + max_tokens exceeds 1000", limit_tokens=1000)
        return "short answer"

    store = MemoryStore()
    agent = Agent(FunctionModel(window), store=store, memory=None, max_tokens=900)
    response = await agent.prompt("x" * 2000)  # ~500 tokens: fits only with a smaller output budget
    assert response.text() == "short answer"
    assert asked[0] == 900 and asked[1] is not None and asked[1] < 900
    events = await store.load(response.run_id)
    (rejected,) = [e.data for e in events if isinstance(e.data, ModelContextRejected)]
    assert rejected.output_budget_tokens == asked[1] and rejected.retry_number == 1
