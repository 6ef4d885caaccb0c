"""A run on a real SDK client (the OpenAI fake, a real HTTP server) traced and measured as the
OpenTelemetry GenAI semantic conventions say: the thread as `gen_ai.conversation.id`, request
parameters, the response id, cached tokens, system instructions, tool definitions,
`error.type`, `server.address`/`server.port`; and the client metrics
`gen_ai.client.token.usage` and `gen_ai.client.operation.duration` with the conventions'
bucket boundaries, read from an in-memory exporter.

Bug (issue 39): a run's spans carried 16 distinct `gen_ai.*` attributes and there were no
GenAI metrics at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eudaimon import Agent, ModelSettings
from eudaimon.errors import RunFailedError
from eudaimon.telemetry import instrument, uninstrument
from eudaimon.telemetry._observer import DURATION_BUCKETS, TOKEN_BUCKETS
from support.tools import lookup


@dataclass
class Recorded:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith(prefix)]

    def points(self, name: str) -> list[HistogramDataPoint]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        found: list[HistogramDataPoint] = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(p for p in metric.data.data_points if isinstance(p, HistogramDataPoint))
        return found


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    instrument(tracer_provider, capture_content=True, meter_provider=meter_provider)
    try:
        yield Recorded(exporter, reader)
    finally:
        uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()


async def test_chat_spans_carry_the_conventions_attributes(recorded: Recorded, openai_server, openai_model) -> None:
    """Invariant: a model call's span has the conversation id, the request's parameters, the
    response id, cached tokens, the system instructions, the tool definitions and the server."""
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 6,
        "total_tokens": 46,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    call = openai_server.tool_call("c1", "lookup", '{"key": "k"}')
    openai_server.reply(
        openai_server.completion(None, tool_calls=[call], finish_reason="tool_calls"),
        openai_server.completion("done", usage=usage),
    )
    agent = Agent(
        openai_model,
        name="helper",
        system_prompt="Be brief.",
        tools=[lookup],
        model_settings=ModelSettings(temperature=0.2, top_p=0.9, seed=7, stop_sequences=("END",), max_tokens=50),
    )
    await agent.prompt("find k", thread_id="thread-7")
    _, chat = recorded.named("chat")
    a = dict(chat.attributes or {})
    assert a["gen_ai.conversation.id"] == "thread-7"
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.agent.name"] == "helper"
    assert (a["gen_ai.request.model"], a["gen_ai.response.model"]) == ("gpt-test", "gpt-test-2025")
    assert a["gen_ai.request.temperature"] == 0.2 and a["gen_ai.request.top_p"] == 0.9
    assert a["gen_ai.request.seed"] == 7 and tuple(a["gen_ai.request.stop_sequences"]) == ("END",)
    assert a["gen_ai.request.max_tokens"] == 50
    assert a["gen_ai.response.id"] == "chatcmpl-1"
    assert a["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (40, 6)
    assert a["gen_ai.usage.cache_read.input_tokens"] == 32
    assert a["gen_ai.output.type"] == "text"
    assert json.loads(str(a["gen_ai.system_instructions"])) == [{"type": "text", "content": "Be brief."}]
    [definition] = json.loads(str(a["gen_ai.tool.definitions"]))
    assert definition["name"] == "lookup" and definition["type"] == "function"
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == int(
        openai_server.url.rsplit(":", 1)[1].split("/")[0]
    )
    names = {k for s in recorded.spans.get_finished_spans() for k in (s.attributes or {}) if k.startswith("gen_ai.")}
    assert len(names) >= 27, sorted(names)  # 16 before issue 39


async def test_client_metrics_with_the_conventions_buckets(recorded: Recorded, openai_server, openai_model) -> None:
    """Invariant: each model call records its duration (s) and its input and output tokens,
    with the conventions' attributes and explicit bucket boundaries."""
    openai_server.reply(
        openai_server.completion("one", usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}),
        openai_server.completion("two", usage={"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}),
    )
    agent = Agent(openai_model)
    await agent.prompt("a")
    await agent.prompt("b")
    [duration] = recorded.points("gen_ai.client.operation.duration")
    assert duration.count == 2 and tuple(duration.explicit_bounds) == DURATION_BUCKETS
    attrs: dict[str, Any] = dict(duration.attributes or {})
    assert attrs["gen_ai.operation.name"] == "chat" and attrs["gen_ai.provider.name"] == "openai"
    assert attrs["gen_ai.request.model"] == "gpt-test" and attrs["server.address"] == "127.0.0.1"
    tokens = {dict(p.attributes or {})["gen_ai.token.type"]: p for p in recorded.points("gen_ai.client.token.usage")}
    assert (tokens["input"].sum, tokens["input"].count) == (30, 2)
    assert (tokens["output"].sum, tokens["output"].count) == (8, 2)
    assert tuple(tokens["input"].explicit_bounds) == TOKEN_BUCKETS


async def test_a_failed_call_has_its_error_type_on_span_and_metric(recorded: Recorded, openai_server, openai_model):
    """A call that fails for good carries the error's class as `error.type`, on the span and on
    the duration metric."""
    openai_server.reply(openai_server.error(400, "bad request"))
    with pytest.raises(RunFailedError):
        await Agent(openai_model).prompt("x")
    [chat] = recorded.named("chat")
    assert (chat.attributes or {})["error.type"] == "ModelRequestRejected"
    [duration] = recorded.points("gen_ai.client.operation.duration")
    assert dict(duration.attributes or {})["error.type"] == "ModelRequestRejected"
