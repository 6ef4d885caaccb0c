"""An in-memory span exporter behind a real SDK tracer provider, instrumented for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eudaimon.telemetry import instrument, uninstrument


class Spans:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name.startswith(prefix)]


@pytest.fixture
def spans() -> Iterator[Spans]:
    recorded = Spans()
    instrument(recorded.provider)
    try:
        yield recorded
    finally:
        uninstrument()
        recorded.provider.shutdown()


@pytest.fixture
def content_spans() -> Iterator[Spans]:
    recorded = Spans()
    instrument(recorded.provider, capture_content=True)
    try:
        yield recorded
    finally:
        uninstrument()
        recorded.provider.shutdown()
