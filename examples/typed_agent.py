"""A typed agent: deps for its tools and instructions, a validated output type, a validator.

`mypy --strict` checks this file (it is in the project's mypy run): `ctx.deps.db` is a
`WeatherDb`, `response.output` is a `Forecast`. Runs offline with a scripted model:

python examples/typed_agent.py            # or set MODEL=openai:gpt-4o-mini with OPENAI_API_KEY
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import assert_type

from pydantic import BaseModel

from eudaimon import Agent, AgentResponse, Message, ModelRetry, ModelSettings, ToolCall, ToolContext, tool
from eudaimon.models import Model, ScriptedModel


@dataclass
class WeatherDb:
    """Stands for a database client: not serializable, never journaled, given again on resume."""

    readings: dict[str, float] = field(default_factory=lambda: {"lisbon": 21.5, "oslo": -3.0})

    def celsius(self, city: str) -> float | None:
        return self.readings.get(city.lower())


@dataclass
class Deps:
    db: WeatherDb
    user: str


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


@tool(effect="read", max_retries=2)
def temperature(ctx: ToolContext[Deps], city: str) -> float:
    """The current temperature of a city, in °C.

    Args:
        city: The city's name, e.g. "Lisbon".
    """
    reading = ctx.deps.db.celsius(city)
    if reading is None:
        raise ModelRetry(f"no station in {city!r}; known cities: {', '.join(ctx.deps.db.readings)}")
    return reading


def instructions(ctx: ToolContext[Deps]) -> str:
    return f"You are {ctx.deps.user}'s weather assistant. Use the temperature tool."


def plausible(forecast: Forecast) -> Forecast:
    if not -90 < forecast.celsius < 60:
        raise ModelRetry(f"{forecast.celsius}°C is not a plausible temperature")
    return forecast


def model() -> Model | str:
    name = os.environ.get("MODEL")
    if name:
        return name
    return ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCall("c1", "temperature", {"city": "Lisbon"})]),
            '{"city": "Lisbon", "celsius": 21.5, "summary": "Mild and sunny."}',
        ]
    )


agent = Agent(
    model(),
    deps_type=Deps,
    output_type=Forecast,
    output_validators=[plausible],
    system_prompt=instructions,
    tools=[temperature],
    model_settings=ModelSettings(temperature=0.0, parallel_tool_calls=False),
)


async def main() -> None:
    response = await agent.prompt("How warm is it in Lisbon?", deps=Deps(WeatherDb(), user="Ada"))
    assert_type(response, AgentResponse[Forecast])
    forecast = response.output
    assert_type(forecast, Forecast)
    print(f"{forecast.city}: {forecast.celsius}°C, {forecast.summary}")
    print(f"{len(response.new_messages())} new messages in run {response.run_id}")


if __name__ == "__main__":
    asyncio.run(main())
