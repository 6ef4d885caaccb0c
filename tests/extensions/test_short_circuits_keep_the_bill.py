"""Middleware short-circuits and the bill: what a provider billed is always counted, and a
request middleware answered instead of the model is journaled as such."""

from __future__ import annotations

from _in_loop_support import answer, payloads, types

from eudaimon import Agent, Usage
from eudaimon.cost import OpenAICostModel
from eudaimon.middleware import Middleware, MiddlewareAction
from eudaimon.models import ChatRequest, ChatResponse, ScriptedModel


class ReplaceAnswer(Middleware):
    def on_response(self, response: ChatResponse) -> object:
        return MiddlewareAction.ShortCircuit("a replaced answer")


class Cache(Middleware):
    def on_request(self, request: ChatRequest) -> object:
        return MiddlewareAction.ShortCircuit("from the cache")


async def test_an_on_response_short_circuit_keeps_what_the_provider_billed() -> None:
    """Bug: an `on_response` ShortCircuit erased the bill (`Usage(1000, 500)` became usage 0,
    cost 0). The replacement is the answer; the usage and cost the provider reported stay in
    `model_called`, the run's state and the response."""
    model = ScriptedModel([answer("the model's answer", usage=Usage(1000, 500))], model_id="gpt-4o")
    agent = Agent(model, middleware=[ReplaceAnswer()], cost_model=OpenAICostModel())
    response = await agent.prompt("hi")
    assert response.text() == "a replaced answer"
    (called,) = await payloads(agent, response.run_id, "model_called")
    assert called.usage == Usage(1000, 500) and called.model == "gpt-4o"
    assert called.cost_usd is not None and called.cost_usd > 0
    assert response.usage == Usage(1000, 500) and response.cost == called.cost_usd


async def test_an_on_request_short_circuit_journals_that_no_model_was_called() -> None:
    """Bug: an `on_request` short-circuit was journaled as `model_called` with the model's name
    and an empty request id, as if the model had answered. Now no attempt is recorded, and the
    `model_called` event names the middleware layer, with no model, no request and no bill."""
    model = ScriptedModel([answer("never asked", usage=Usage(5, 5))], model_id="gpt-4o")
    agent = Agent(model, middleware=[Cache()], cost_model=OpenAICostModel())
    response = await agent.prompt("hi")
    assert response.text() == "from the cache"
    assert await types(agent, response.run_id) == ["run_started", "model_called", "run_completed"]
    (called,) = await payloads(agent, response.run_id, "model_called")
    assert called.short_circuited_by == "Cache"
    assert (called.model, called.request_id, called.usage, called.cost_usd) == ("", "", Usage(), None)
    assert len(model.requests) == 0
