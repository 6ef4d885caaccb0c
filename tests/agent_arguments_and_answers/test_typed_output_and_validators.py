"""`output_type` makes `response.output` a typed value; output validators run after the schema
and may ask for a correction with `ModelRetry`, up to `max_output_retries` times."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from eudaimon import Agent, ModelRetry, ToolContext
from eudaimon.core.events import FinishRejected, RunCompleted
from eudaimon.errors import OutputRejected
from eudaimon.models import ScriptedModel


class Weather(BaseModel):
    city: str
    celsius: float


async def test_output_is_the_validated_value() -> None:
    """Invariant: with `output_type=Weather`, `response.output` is a `Weather`."""
    agent = Agent(ScriptedModel(['{"city": "Lisbon", "celsius": 21}']), output_type=Weather)
    response = await agent.prompt("weather?")
    assert response.output == Weather(city="Lisbon", celsius=21.0)
    assert response.structured_output == response.output


async def test_a_validator_correction_is_journaled_and_answered() -> None:
    """Invariant: a validator's `ModelRetry` becomes `finish_rejected(by_validator=True)` and a
    user message with its text; the corrected answer passes; what a validator returns is
    what the run completes with (journaled as JSON)."""
    seen: list[Weather] = []

    def plausible(ctx: ToolContext, weather: Weather) -> Weather:
        seen.append(weather)
        if weather.celsius > 60:
            raise ModelRetry(f"{weather.celsius}°C is not plausible for {weather.city}; check the units")
        return weather.model_copy(update={"city": weather.city.title()})

    model = ScriptedModel(['{"city": "lisbon", "celsius": 70}', '{"city": "lisbon", "celsius": 21}'])
    agent = Agent(model, output_type=Weather, output_validators=[plausible])
    response = await agent.prompt("weather?")
    assert response.output == Weather(city="Lisbon", celsius=21)
    assert len(seen) == 2
    correction = model.requests[1].messages[-1]
    assert "check the units" in correction.content and "JSON Schema" not in correction.content
    events = [e.data for e in await agent.store.load(response.run_id)]
    [rejected] = [e for e in events if isinstance(e, FinishRejected)]
    assert rejected.by_validator
    assert [e.structured for e in events if isinstance(e, RunCompleted)] == [{"city": "Lisbon", "celsius": 21.0}]


async def test_schema_failures_are_corrected_before_validators_run() -> None:
    """Invariant: the schema runs first; a validator only sees valid values."""
    seen: list[Weather] = []

    async def record(weather: Weather) -> None:
        seen.append(weather)

    agent = Agent(
        ScriptedModel(["not json", '{"city": "Oslo", "celsius": -3}']),
        output_type=Weather,
        output_validators=[record],
    )
    response = await agent.prompt("weather?")
    assert seen == [Weather(city="Oslo", celsius=-3)] and response.output == seen[0]


async def test_max_output_retries_bounds_the_corrections() -> None:
    """Invariant: with max_output_retries=1 the second rejection fails the run with
    OutputRejected; with 0, the first does."""

    def never(text: str) -> str:
        raise ModelRetry("try again")

    agent = Agent(ScriptedModel(["a", "b", "c"]), output_validators=[never], max_output_retries=1)
    with pytest.raises(OutputRejected) as caught:
        await agent.prompt("x")
    state = await agent.state(caught.value.run_id)
    assert state.finish_rejections == 2 and state.steps == 2
    strict = Agent(ScriptedModel(["a"]), output_validators=[never], max_output_retries=0)
    with pytest.raises(OutputRejected):
        await strict.prompt("x")


async def test_text_validators_may_rewrite_the_answer() -> None:
    """Without `output_type`, validators see and return the text."""
    agent = Agent(ScriptedModel(["  hello  "]), output_validators=[str.strip])
    response = await agent.prompt("x")
    assert response.output == "hello" and response.text() == "hello"
