"""An in-memory span exporter behind a real SDK tracer provider, instrumented for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _spans import Spans

from eudaimon.telemetry import instrument, uninstrument


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
