"""Cost and budgets inside the one loop: each call priced at the model that served it, budgets
checked before every model call, and everything billed counted."""

from __future__ import annotations

from typing import Any

import pytest
from _in_loop_support import answer, call, payloads, types

from eudaimon import Agent, Usage, tool
from eudaimon.cost import OpenAICostModel, TokenDirection
from eudaimon.errors import BudgetExceeded, ConfigurationError, GuardrailBlocked
from eudaimon.guardrails import Block, OutputGuardrail, Pass, RetryWithFeedback
from eudaimon.models import ScriptedModel
from eudaimon.streaming import Usage as UsageEvent

PRICES = OpenAICostModel()


def usd(model_id: str, usage: Usage) -> float:
    """The expected price, computed independently from per-token rates."""
    rate_in = PRICES.cost_per_token(model_id, TokenDirection.INPUT)
    rate_out = PRICES.cost_per_token(model_id, TokenDirection.OUTPUT)
    assert rate_in is not None and rate_out is not None
    return usage.input_tokens * rate_in + usage.output_tokens * rate_out


@tool(effect="read")
def ping() -> str:
    """Ping."""
    return "pong"


async def test_response_cost_is_the_sum_of_the_journaled_call_costs() -> None:
    """Invariant: AgentResponse.cost equals the sum of model_called.cost_usd, each priced at the model's rates."""
    u1, u2 = Usage(1000, 200), Usage(1500, 100)
    agent = Agent(
        ScriptedModel([call("ping", usage=u1), answer("done", usage=u2)], model_id="gpt-4o"),
        tools=[ping],
        cost_model=OpenAICostModel(),
    )
    response = await agent.prompt("go")
    costs = [c.cost_usd for c in await payloads(agent, response.run_id, "model_called")]
    assert costs == [pytest.approx(usd("gpt-4o", u1)), pytest.approx(usd("gpt-4o", u2))]
    assert response.cost == pytest.approx(sum(c or 0 for c in costs)) and response.cost > 0
    assert response.usage == u1 + u2


async def test_each_call_is_priced_at_the_model_that_served_it() -> None:
    """Invariant: a turn served by another model (ChatResponse.model) is priced at that model: the
    run's total is the true sum, not the whole usage repriced at the agent's model."""
    usage = Usage(10_000, 2_000)
    served = call("ping", usage=usage)
    served.model = "gpt-4o-mini"
    agent = Agent(
        ScriptedModel([served, answer("done", usage=usage)], model_id="gpt-4o"),
        tools=[ping],
        cost_model=OpenAICostModel(),
    )
    response = await agent.prompt("go")
    first, second = await payloads(agent, response.run_id, "model_called")
    assert (first.model, second.model) == ("gpt-4o-mini", "gpt-4o")
    assert first.cost_usd == pytest.approx(usd("gpt-4o-mini", usage))
    true_sum = usd("gpt-4o-mini", usage) + usd("gpt-4o", usage)
    assert response.cost == pytest.approx(true_sum)
    assert response.cost != pytest.approx(usd("gpt-4o", usage + usage))


async def test_usd_budget_stops_before_the_next_model_call() -> None:
    """Invariant: once spend reaches max_budget, the run stops before calling the model again, with
    budget_exceeded journaled and BudgetExceeded(spent, limit) raised."""
    u1 = Usage(1000, 500)  # $0.0075 at gpt-4o
    model = ScriptedModel([call("ping", usage=u1), answer("never reached")], model_id="gpt-4o")
    agent = Agent(model, tools=[ping], cost_model=OpenAICostModel(), max_budget=0.005)
    with pytest.raises(BudgetExceeded) as info:
        await agent.prompt("go")
    assert info.value.spent == pytest.approx(usd("gpt-4o", u1)) and info.value.limit == 0.005
    assert len(model.requests) == 1
    run_types = await types(agent, info.value.run_id or "")
    assert run_types[-1] == "budget_exceeded"
    # The tools of the last paid turn ran; no attempt was started after the budget ran out.
    assert run_types.index("tool_completed") < run_types.index("budget_exceeded")
    assert run_types.count("model_attempt_started") == 1
    (exceeded,) = await payloads(agent, info.value.run_id or "", "budget_exceeded")
    assert exceeded.spent == pytest.approx(info.value.spent) and exceeded.limit == 0.005
    assert (await agent.state(info.value.run_id or "")).status == "budget_exceeded"


async def test_token_budget_stops_before_the_next_model_call() -> None:
    """Invariant: max_budget_tokens (input + output) stops the run the same way, without a cost model."""
    model = ScriptedModel([call("ping", usage=Usage(800, 300)), answer("never reached")])
    agent = Agent(model, tools=[ping], max_budget_tokens=1000)
    with pytest.raises(BudgetExceeded) as info:
        await agent.prompt("go")
    assert (info.value.spent, info.value.limit, info.value.unit) == (1100, 1000, "tokens")
    assert len(model.requests) == 1
    assert (await types(agent, info.value.run_id or ""))[-1] == "budget_exceeded"


async def test_rejected_answers_count_toward_the_budget() -> None:
    """Invariant: a RetryWithFeedback rejection's cost counts: it alone can exhaust the budget, so
    the retry it asked for is never made."""

    class Never(OutputGuardrail):
        def check(self, text: str) -> Any:
            return RetryWithFeedback("again")

    model = ScriptedModel([answer("draft", usage=Usage(1000, 500)), answer("never reached")], model_id="gpt-4o")
    agent = Agent(model, output_guardrails=[Never()], cost_model=OpenAICostModel(), max_budget=0.005)
    with pytest.raises(BudgetExceeded) as info:
        await agent.prompt("go")
    assert len(model.requests) == 1
    assert info.value.spent == pytest.approx(usd("gpt-4o", Usage(1000, 500)))
    assert (await types(agent, info.value.run_id or ""))[-2:] == ["guardrail_rejected", "budget_exceeded"]


async def test_billed_failures_count_in_the_runs_spend() -> None:
    """Invariant: a billed failure (an answer blocked by an output guardrail) is in state.cost_usd."""

    class Refuse(OutputGuardrail):
        def check(self, text: str) -> Any:
            return Block("no")

    usage = Usage(2000, 100)
    agent = Agent(
        ScriptedModel([answer("x", usage=usage)], model_id="gpt-4o"), output_guardrails=[Refuse()], cost_model=PRICES
    )
    with pytest.raises(GuardrailBlocked) as info:
        await agent.prompt("go")
    state = await agent.state(info.value.run_id or "")
    assert state.cost_usd == pytest.approx(usd("gpt-4o", usage)) and state.usage == usage


def test_a_usd_budget_needs_a_price_at_build() -> None:
    """Invariant: a USD budget that could not be measured is refused when the Agent is built."""
    with pytest.raises(ConfigurationError, match="no price for model 'scripted'"):
        Agent(ScriptedModel([]), cost_model=OpenAICostModel(), max_budget=1.0)
    with pytest.raises(ConfigurationError, match="needs a cost_model"):
        Agent(ScriptedModel([], model_id="gpt-4o"), max_budget=1.0)
    with pytest.raises(ConfigurationError, match="cost_per_token"):
        Agent(ScriptedModel([], model_id="gpt-4o"), cost_model=object())
    Agent(ScriptedModel([], model_id="gpt-4o"), cost_model=OpenAICostModel(), max_budget=1.0)


async def test_streamed_usage_events_carry_a_priced_estimate() -> None:
    """Invariant: prompt_stream's Usage events carry estimated_cost > 0 when the model is priced: the
    reported usage priced when there is one, the ~4-chars-a-token estimate priced when there is none."""
    reported = Usage(1000, 100)
    agent = Agent(
        ScriptedModel([call("ping", usage=reported), answer("a final answer of some length")], model_id="gpt-4o"),
        tools=[ping],
        cost_model=OpenAICostModel(),
    )
    usages = [e async for e in agent.prompt_stream("go") if isinstance(e, UsageEvent)]
    assert [u.iteration for u in usages] == [1, 2]
    assert usages[0].estimated_cost == pytest.approx(usd("gpt-4o", reported))
    assert usages[1].output_tokens > 0 and usages[1].estimated_cost > 0

    unpriced = Agent(ScriptedModel(["hello"]), cost_model=OpenAICostModel())
    (only,) = [e async for e in unpriced.prompt_stream("go") if isinstance(e, UsageEvent)]
    assert only.estimated_cost == 0.0


async def test_streamed_usage_of_a_rejected_answer_is_reported_too() -> None:
    """Invariant: a stream consumer summing Usage.estimated_cost gets the run's cost: the iteration
    whose answer a guardrail rejected reports its (billed) usage like any other."""

    class OnceMore(OutputGuardrail):
        def __init__(self) -> None:
            self.seen = 0

        def check(self, text: str) -> Any:
            self.seen += 1
            return RetryWithFeedback("again") if self.seen == 1 else Pass()

    agent = Agent(
        ScriptedModel(
            [answer("draft", usage=Usage(900, 90)), answer("final", usage=Usage(1000, 20))], model_id="gpt-4o"
        ),
        output_guardrails=[OnceMore()],
        cost_model=OpenAICostModel(),
    )
    events = [e async for e in agent.prompt_stream("go")]
    usages = [e for e in events if isinstance(e, UsageEvent)]
    assert [u.iteration for u in usages] == [1, 2]
    state = await agent.state(events[-1].run_id)  # type: ignore[union-attr]
    assert sum(u.estimated_cost for u in usages) == pytest.approx(state.cost_usd) and state.cost_usd > 0
