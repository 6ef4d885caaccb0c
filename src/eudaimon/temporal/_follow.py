"""What a committed event tells a `prompt_stream` caller, for runs driven elsewhere."""

from __future__ import annotations

import json

from eudaimon.core.events import Event, GuardrailRejected, ModelCalled, ToolCompleted, ToolDenied
from eudaimon.streaming import (
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
)


def stream_events(event: Event) -> list[StreamEvent]:
    """The stream events one journaled event stands for: a model's answer (its text whole,
    its tool calls with their arguments, its usage), a tool's result. Other events say nothing
    to a stream. The arguments come as one delta, the text as one: a journaled answer is whole."""
    data = event.data
    if isinstance(data, ModelCalled):
        out: list[StreamEvent] = []
        if data.message.content:
            out.append(TextDelta(data.message.content))
        for call in data.message.tool_calls:
            raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            out += [ToolCallStart(call.id, call.name), ToolCallDelta(call.id, raw), ToolCallEnd(call.id)]
        usage = data.usage
        out.append(Usage(data.step, usage.input_tokens, usage.output_tokens, data.cost_usd or 0.0))
        return out
    if isinstance(data, ToolCompleted):
        return [ToolResult(data.call_id, data.output, data.is_error)]
    if isinstance(data, ToolDenied):
        return [ToolResult(data.call_id, f"Tool call denied: {data.reason}", True)]
    if isinstance(data, GuardrailRejected):
        return [Usage(data.step, data.usage.input_tokens, data.usage.output_tokens, data.cost_usd or 0.0)]
    return []
