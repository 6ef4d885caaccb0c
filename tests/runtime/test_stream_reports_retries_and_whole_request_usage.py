"""What `prompt_stream` promises beyond deltas: an `Error` event when a model call is retried,
and a `Usage` estimate, when the provider reports none, that counts the whole request."""

from __future__ import annotations

from eudaimon import Agent, Message
from eudaimon.core.groups import estimate_tokens
from eudaimon.errors import ModelUnavailable
from eudaimon.memory import SlidingWindowMemory
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.streaming import Done, Error, StreamEvent, TextDelta, Usage


async def _collect(agent: Agent, text: str) -> list[StreamEvent]:
    return [event async for event in agent.prompt_stream(text)]


async def test_a_retried_model_call_streams_an_error_event_before_the_answer() -> None:
    """Bug: the `Error` event promised on a model retry was never sent. A call that fails once
    with a retryable error streams one `Error` naming the failure and the retry, then the
    answer; the journal has the matching `model_retry_scheduled`."""
    failures = iter([ModelUnavailable("503 from the provider")])

    def flaky(request: ChatRequest) -> str:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return "recovered"

    agent = Agent(FunctionModel(flaky), memory=None)
    events = await _collect(agent, "hi")
    errors = [e for e in events if isinstance(e, Error)]
    assert len(errors) == 1 and "503 from the provider" in errors[0].message and "retry 1" in errors[0].message
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert events.index(errors[0]) < first_text
    assert isinstance(events[-1], Done) and events[-1].status == "completed"
    journal = await agent.store.load(events[-1].run_id)
    assert [e.type for e in journal].count("model_retry_scheduled") == 1


async def test_the_usage_estimate_counts_every_message_of_the_request() -> None:
    """Bug: with no usage from the provider, the streamed `Usage` estimate counted only the last
    two messages of the request. It counts them all (a long history is most of the bill)."""
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return "ok"

    memory = SlidingWindowMemory(50)
    for i in range(6):
        await memory.add_message(Message.user(f"earlier turn {i} " * 30, id=f"u{i}"))
    agent = Agent(FunctionModel(answer), memory=memory, system_prompt="Be brief.")
    events = await _collect(agent, "now")
    (usage,) = [e for e in events if isinstance(e, Usage)]
    (request,) = seen
    whole = sum(estimate_tokens(m) for m in request.messages)
    assert usage.input_tokens == whole
    assert whole > sum(estimate_tokens(m) for m in request.messages[-2:]) * 5
    assert usage.output_tokens == estimate_tokens(Message.assistant("ok"))
