"""OpenTelemetry traces of runs, model calls and tool calls (GenAI semantic conventions).

Needs the `otel` extra: `pip install -e '.[otel]'`. Turn it on once per process:

    from eudaimon.telemetry import instrument
    instrument()                      # the global tracer provider
    instrument(provider, capture_content=True)   # message content too (off by default)
"""

from __future__ import annotations

from typing import Any

from eudaimon._extras import needs
from eudaimon.runtime.loop.journal import observers

with needs("otel", "eudaimon.telemetry"):
    from eudaimon.telemetry._observer import SpanObserver

__all__ = ["SpanObserver", "instrument", "uninstrument"]


def instrument(
    tracer_provider: Any = None, capture_content: bool = False, *, meter_provider: Any = None
) -> SpanObserver:
    """Trace every run this process drives, from now on.

    Spans: `invoke_agent {agent}` per attempt to drive a run (a resumed run's attempt links to
    its earlier attempts' spans), `chat {model}` per model call, `execute_tool {tool}` per tool
    execution; a child run's span sits under the tool call that started it. Attributes follow
    the GenAI semantic conventions (the thread as `gen_ai.conversation.id`, the request's
    parameters, the response id, cached tokens, the tool definitions, `error.type`,
    `server.address` and `server.port`), plus `eudaimon.run_id` and `eudaimon.cost_usd`; no
    idempotency key or secret is ever an attribute.

    Metrics: the conventions' client histograms `gen_ai.client.token.usage` (by
    `gen_ai.token.type`) and `gen_ai.client.operation.duration` (seconds), with the bucket
    boundaries the conventions give, one measurement per model call.

    Args:
        tracer_provider: an OpenTelemetry `TracerProvider`; None uses the global one.
        capture_content: also record messages, tool arguments and results as attributes
            (`gen_ai.input.messages`, `gen_ai.system_instructions`, `gen_ai.output.messages`,
            `gen_ai.tool.call.arguments`, …).
        meter_provider: an OpenTelemetry `MeterProvider` for the metrics; None uses the global one.

    Returns:
        The observer installed; calling `instrument` again replaces it.
    """
    uninstrument()
    observer = SpanObserver(tracer_provider, capture_content=capture_content, meter_provider=meter_provider)
    observers.append(observer)
    return observer


def uninstrument() -> None:
    """Stop tracing (runs already traced keep their spans)."""
    observers[:] = [o for o in observers if not isinstance(o, SpanObserver)]


def __dir__() -> list[str]:
    """The public names, not the helpers this module imports."""
    return sorted(__all__)
