"""Guardrails inside the one loop: input checked before anything is persisted, output checked before
the answer is persisted, and a rejected answer never persisted at all while its cost still counts."""

from __future__ import annotations

from typing import Any

import pytest
from _in_loop_support import answer, call, journal, journal_json, payloads, types

from eudaimon import Agent, Usage, tool
from eudaimon.cost import OpenAICostModel, price_usage
from eudaimon.errors import GuardrailBlocked, OutputRejected
from eudaimon.guardrails import (
    Block,
    ContentPolicyGuardrail,
    InputGuardrail,
    MaxTokenGuardrail,
    OutputGuardrail,
    Pass,
    RegexFilterGuardrail,
    RetryWithFeedback,
    Transform,
)
from eudaimon.memory import SlidingWindowMemory
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore

REJECTED = "SECRET-REJECTED-DRAFT"


class NoDrafts(OutputGuardrail):
    """Rejects any answer containing the draft marker, asking for another."""

    def check(self, text: str) -> Any:
        return RetryWithFeedback("Do not include the draft; answer plainly.") if REJECTED in text else Pass()


class Shout(OutputGuardrail):
    async def check(self, text: str) -> Any:
        return Transform(text.upper())


class Refuse(OutputGuardrail):
    def check(self, text: str) -> Any:
        return Block("not allowed to say that")


class NoSecrets(InputGuardrail):
    def check(self, text: str) -> Any:
        return Block("mentions a secret") if "secret" in text else Pass()


class Polite(InputGuardrail):
    def check(self, text: str) -> Any:
        return Transform(f"Please: {text}")


# -- input -------------------------------------------------------------------------------------


async def test_input_block_raises_and_writes_nothing() -> None:
    """Invariant: an input Block raises GuardrailBlocked before anything is persisted: the store has no run."""
    store = MemoryStore()
    model = ScriptedModel(["never"])
    agent = Agent(model, input_guardrails=[NoSecrets()], store=store)
    with pytest.raises(GuardrailBlocked, match="mentions a secret") as info:
        await agent.prompt("tell me the secret")
    assert info.value.guardrail == "NoSecrets"
    assert await store.list_runs() == []
    assert model.requests == []


async def test_input_transform_is_what_the_model_sees_and_the_journal_keeps() -> None:
    """Invariant: an input Transform replaces the input for the rest of the run: the model and the
    journal see the transformed text, never the raw one."""
    model = ScriptedModel(["ok"])
    agent = Agent(model, input_guardrails=[Polite()])
    response = await agent.prompt("give me data")
    assert model.requests[0].messages[-1].content == "Please: give me data"
    (started,) = await payloads(agent, response.run_id, "run_started")
    assert started.input == "Please: give me data"
    assert [m.content for m in started.messages] == ["Please: give me data"]


async def test_regex_redaction_of_input_never_reaches_model_or_journal() -> None:
    """Invariant: a RegexFilterGuardrail redaction happens before persistence: the raw SSN is in no
    request, no event and no response message."""
    ssn = "123-45-6789"
    guard = RegexFilterGuardrail().redact(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN REDACTED]")
    model = ScriptedModel(["noted"])
    agent = Agent(model, input_guardrails=[guard])
    response = await agent.prompt(f"my ssn is {ssn}")
    assert model.requests[0].messages[-1].content == "my ssn is [SSN REDACTED]"
    assert ssn not in await journal_json(agent, response.run_id)
    assert all(ssn not in m.content for m in response.messages)


async def test_regex_block_and_max_tokens_block_input() -> None:
    """Invariant: built-in input guardrails block through Agent.prompt with GuardrailBlocked, nothing stored."""
    store = MemoryStore()
    agent = Agent(
        ScriptedModel([]),
        input_guardrails=[
            RegexFilterGuardrail().block(r"(?i)password\s*[:=]", "credential leak"),
            MaxTokenGuardrail(5),
        ],
        store=store,
    )
    with pytest.raises(GuardrailBlocked, match="credential leak"):
        await agent.prompt("password: hunter2")
    with pytest.raises(GuardrailBlocked, match="over the limit of 5"):
        await agent.prompt("this input is much longer than twenty characters")
    assert await store.list_runs() == []


async def test_content_policy_guardrail_with_a_scripted_judge() -> None:
    """Invariant: ContentPolicyGuardrail asks its own model; BLOCK blocks the input, PASS lets the
    output through, and the judge's calls are not part of the run's journal."""
    store = MemoryStore()
    judge = ScriptedModel(["BLOCK: threatens someone"])
    agent = Agent(ScriptedModel([]), input_guardrails=[ContentPolicyGuardrail(judge, "No threats.")], store=store)
    with pytest.raises(GuardrailBlocked, match="threatens someone"):
        await agent.prompt("I will hurt you")
    assert await store.list_runs() == []
    assert judge.requests[0].messages[-1].content == "I will hurt you"

    judge = ScriptedModel(["PASS"])
    agent = Agent(
        ScriptedModel([answer("a kind reply")]), output_guardrails=[ContentPolicyGuardrail(judge, "Be kind.")]
    )
    response = await agent.prompt("hello")
    assert response.final_text == "a kind reply"
    assert judge.requests[0].messages[-1].content == "a kind reply"
    assert (await types(agent, response.run_id)).count("model_called") == 1

    judge = ScriptedModel(["I am not sure"])  # an unparseable verdict blocks: fail closed
    agent = Agent(ScriptedModel([answer("hmm")]), output_guardrails=[ContentPolicyGuardrail(judge, "Be kind.")])
    with pytest.raises(GuardrailBlocked, match="unparseable"):
        await agent.prompt("hello")


# -- output ------------------------------------------------------------------------------------


async def test_output_transform_replaces_the_final_text_in_journal_and_response() -> None:
    """Invariant: an output Transform is applied before the answer is persisted: model_called,
    run_completed and the response all carry the transformed text."""
    agent = Agent(ScriptedModel([answer("quiet")]), output_guardrails=[Shout()])
    response = await agent.prompt("hi")
    assert response.final_text == "QUIET" and response.messages[-1].content == "QUIET"
    (called,) = await payloads(agent, response.run_id, "model_called")
    (completed,) = await payloads(agent, response.run_id, "run_completed")
    assert called.message.content == "QUIET" and completed.output == "QUIET"
    assert '"quiet"' not in await journal_json(agent, response.run_id)


async def test_output_block_bills_the_call_and_fails_the_run() -> None:
    """Invariant: an output Block fails the run with GuardrailBlocked; the blocked call's usage and
    cost are journaled (model_failed) and counted in the state, its text is not persisted."""
    usage = Usage(1000, 500)
    agent = Agent(
        ScriptedModel([answer("forbidden words", usage=usage)], model_id="gpt-4o"),
        output_guardrails=[Refuse()],
        cost_model=OpenAICostModel(),
    )
    with pytest.raises(GuardrailBlocked, match="not allowed to say that") as info:
        await agent.prompt("hi")
    run_id = info.value.run_id or ""
    assert (await types(agent, run_id))[-2:] == ["model_failed", "run_failed"]
    (failed,) = await payloads(agent, run_id, "model_failed")
    expected = price_usage(OpenAICostModel(), "gpt-4o", usage)
    assert failed.usage == usage and failed.cost_usd == pytest.approx(expected) and expected
    state = await agent.state(run_id)
    assert state.usage == usage and state.cost_usd == pytest.approx(expected)
    assert state.error_kind == "GuardrailBlocked"
    assert "forbidden words" not in await journal_json(agent, run_id)


async def test_retry_with_feedback_never_persists_the_rejected_text_but_counts_its_cost() -> None:
    """Invariant (the issue's headline): a RetryWithFeedback answer leaves no trace in messages,
    memory or any event, while its usage and cost are in state.usage / state.cost_usd; a
    guardrail_rejected event is written and its feedback becomes a user message the model sees."""
    rejected_usage, accepted_usage = Usage(1200, 300), Usage(1300, 40)
    model = ScriptedModel(
        [answer(f"Here is my {REJECTED}", usage=rejected_usage), answer("plain answer", usage=accepted_usage)],
        model_id="gpt-4o",
    )
    memory = SlidingWindowMemory()
    agent = Agent(model, output_guardrails=[NoDrafts()], cost_model=OpenAICostModel(), memory=memory)
    response = await agent.prompt("question")
    run_id = response.run_id

    assert response.final_text == "plain answer"
    assert REJECTED not in await journal_json(agent, run_id)
    assert all(REJECTED not in m.content for m in response.messages)
    assert all(REJECTED not in m.content for m in await memory.get_messages())

    (rejected,) = await payloads(agent, run_id, "guardrail_rejected")
    assert rejected.guardrail == "NoDrafts" and rejected.usage == rejected_usage
    prices = OpenAICostModel()
    assert rejected.cost_usd == pytest.approx(price_usage(prices, "gpt-4o", rejected_usage))
    (called,) = await payloads(agent, run_id, "model_called")
    state = await agent.state(run_id)
    assert state.usage == rejected_usage + accepted_usage
    assert state.cost_usd == pytest.approx((rejected.cost_usd or 0) + (called.cost_usd or 0))
    assert response.cost == pytest.approx(state.cost_usd) and response.usage == state.usage

    feedback = "Do not include the draft; answer plainly."
    assert [m.role for m in response.messages] == ["user", "user", "assistant"]
    assert response.messages[1].content == feedback
    assert model.requests[1].messages[-1].content == feedback
    assert state.guardrail_rejections == 0  # reset on accept


async def test_retry_with_feedback_gives_up_after_eight_consecutive_rejections() -> None:
    """Invariant: 8 consecutive rejections fail the run with OutputRejected, journaled, after exactly
    8 model calls; none of the rejected texts is persisted."""
    model = ScriptedModel([answer(f"{REJECTED} #{i}", usage=Usage(10, 10)) for i in range(20)])
    agent = Agent(model, output_guardrails=[NoDrafts()])
    with pytest.raises(OutputRejected, match="rejected 8 answers in a row") as info:
        await agent.prompt("question")
    run_id = info.value.run_id or ""
    assert len(model.requests) == 8
    run_types = await types(agent, run_id)
    assert run_types.count("guardrail_rejected") == 8 and run_types[-1] == "run_failed"
    assert REJECTED not in await journal_json(agent, run_id)
    state = await agent.state(run_id)
    assert state.usage == Usage(80, 80) and state.error_kind == "OutputRejected"


async def test_rejection_counter_resets_on_accept() -> None:
    """Invariant: seven rejections then an accepted answer completes (the limit is 8, not fewer), the
    counter is 0 afterwards, and a following run of the same thread gets its own 7 retries."""
    script = [answer(f"{REJECTED} #{i}") for i in range(7)] + [answer("fine")]
    model = ScriptedModel(script * 2)
    agent = Agent(model, output_guardrails=[NoDrafts()], memory=SlidingWindowMemory())
    first = await agent.prompt("q1", thread_id="t")
    assert first.final_text == "fine" and (await agent.state(first.run_id)).guardrail_rejections == 0
    second = await agent.prompt("q2", thread_id="t")
    assert second.final_text == "fine" and second.iterations == 8


async def test_output_guardrails_see_only_final_answers_and_chain_transforms() -> None:
    """Invariant: output guardrails judge final answers only (a tool-calling turn is not checked), and
    Transforms chain in order before a later guardrail decides."""

    @tool(effect="read")
    def peek() -> str:
        """Peek."""
        return "seen"

    seen: list[str] = []

    class Spy(OutputGuardrail):
        def check(self, text: str) -> Any:
            seen.append(text)
            return Pass()

    agent = Agent(ScriptedModel([call("peek"), answer("done")]), tools=[peek], output_guardrails=[Shout(), Spy()])
    response = await agent.prompt("go")
    assert seen == ["DONE"] and response.final_text == "DONE"


async def test_streamed_run_with_retry_with_feedback_journals_the_same() -> None:
    """Invariant: prompt_stream drives the same loop: a rejected answer is journaled as
    guardrail_rejected, never as a message, and the stream says an answer was rejected."""

    def respond(request: ChatRequest) -> str:
        return (
            "clean" if request.messages[-1].role == "user" and "plainly" in request.messages[-1].content else REJECTED
        )

    agent = Agent(FunctionModel(respond), output_guardrails=[NoDrafts()])
    events = [e async for e in agent.prompt_stream("q")]
    run_id = events[-1].run_id  # type: ignore[union-attr]
    assert any(type(e).__name__ == "Error" and "rejected" in e.message for e in events)  # type: ignore[union-attr]
    assert REJECTED not in "\n".join(str(e.data) for e in await journal(agent, run_id))
    assert (await agent.state(run_id)).output == "clean"
