"""OpenTelemetry traces of a run: spans for the run, each model call and each tool call.

Spans print to the console here; point an OTLP exporter at your collector instead, e.g.
`OTLPSpanExporter(endpoint="http://127.0.0.1:4318/v1/traces")`. Needs `eudaimon[otel]`.

    python examples/traced_agent.py
"""

from __future__ import annotations

import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.telemetry import instrument


@tool(effect="read")
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    instrument(provider)  # capture_content=True would add messages, arguments and results
    agent = Agent(
        ScriptedModel([Message.assistant(None, [ToolCall("c1", "weather", {"city": "Lyon"})]), "Sunny in Lyon."]),
        name="forecaster",
        tools=[weather],
    )
    response = await agent.prompt("Weather in Lyon?")
    provider.shutdown()
    print(response.final_text)


if __name__ == "__main__":
    asyncio.run(main())
