"""`SpanObserver`: spans made from what a run records, as it records it.

A model call's span runs from its `model_attempt_started` to its outcome, a tool's from its
`tool_started` intent to its `tool_completed` (or unknown outcome, or suspension): only what
this process executes gets a span, and what a resumed run reads back from its journal gets
none. Each attempt to drive a run journals the ids of its span (`attempt_traced`), so a later
attempt, in any process, links to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from eudaimon.core.events import (
    ApprovalRequested,
    AttemptTraced,
    EventData,
    GuardrailRejected,
    ModelAttemptStarted,
    ModelCalled,
    ModelContextRejected,
    ModelFailed,
    ModelRetryScheduled,
    ToolCompleted,
    ToolOutcomeUnknown,
    ToolStarted,
)
from eudaimon.core.messages import Message
from eudaimon.runtime.clock import now
from eudaimon.runtime.config import RuntimeConfig
from eudaimon.runtime.journal import RunJournal

_VERSION = "0.1.0"


@dataclass(slots=True)
class _Attempt:
    span: Span
    cfg: RuntimeConfig
    traced: bool = False
    """True once its `attempt_traced` event is recorded."""
    model: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)


def _ns(at: datetime | None = None) -> int:
    return int((at or now()).timestamp() * 1_000_000_000)


def _provider(cfg: RuntimeConfig) -> str:
    named = getattr(cfg.model, "provider", None)
    if isinstance(named, str) and named:
        return named
    return type(cfg.model).__name__.removesuffix("Model").lower() or "unknown"


def _messages_json(messages: list[Message] | tuple[Message, ...]) -> str:
    return json.dumps(
        [
            {
                "role": m.role.value,
                "parts": [{"type": "text", "content": m.content}]
                + [{"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls],
                **({"tool_call_id": m.tool_call_id} if m.tool_call_id else {}),
            }
            for m in messages
        ],
        ensure_ascii=False,
        default=str,
    )


class SpanObserver:
    """A `RunObserver` that turns runs into OpenTelemetry spans (see `instrument`)."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool = False) -> None:
        self.tracer = trace.get_tracer("eudaimon", _VERSION, tracer_provider=tracer_provider)
        self.capture_content = capture_content
        self._attempts: dict[int, _Attempt] = {}
        self._tool_spans: dict[tuple[str, str], Span] = {}
        """Open tool spans by (run id, call id), for a child run to nest under."""

    # -- attempts ---------------------------------------------------------------------------

    def attempt_started(self, journal: RunJournal, cfg: RuntimeConfig) -> None:
        state = journal.state
        parent = None
        if state.parent_call is not None:
            caller = self._tool_spans.get((state.parent_call.run_id, state.parent_call.call_id))
            if caller is not None:
                parent = trace.set_span_in_context(caller)
        links = [
            Link(
                SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(1)),
                {"eudaimon.link": "earlier_attempt"},
            )
            for trace_id, span_id in state.traced_attempts
        ]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": cfg.agent,
            "gen_ai.provider.name": _provider(cfg),
            "gen_ai.request.model": cfg.model.model_id,
            "eudaimon.run_id": state.run_id,
            "eudaimon.resumed": bool(state.steps or state.traced_attempts),
        }
        if state.thread_id:
            attributes["gen_ai.conversation.id"] = state.thread_id
        if state.parent_call is not None:
            attributes["eudaimon.parent_run_id"] = state.parent_call.run_id
        span = self.tracer.start_span(
            f"invoke_agent {cfg.agent}", context=parent, kind=SpanKind.INTERNAL, attributes=attributes, links=links
        )
        self._attempts[id(journal)] = _Attempt(span, cfg)

    def attempt_ended(self, journal: RunJournal, error: BaseException | None) -> None:
        attempt = self._attempts.pop(id(journal), None)
        if attempt is None:
            return
        state = journal.state
        for span in (attempt.model, *attempt.tools.values()):
            if span is not None:  # the attempt stopped while it ran (cancelled, the store failed)
                span.set_status(Status(StatusCode.ERROR, "interrupted"))
                span.end()
        for call_id in attempt.tools:
            self._tool_spans.pop((state.run_id, call_id), None)
        span = attempt.span
        span.set_attribute("gen_ai.usage.input_tokens", state.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", state.usage.output_tokens)
        span.set_attribute("eudaimon.status", state.status.value)
        if state.cost_known:
            span.set_attribute("eudaimon.cost_usd", state.cost_usd)
        if self.capture_content and state.output is not None:
            span.set_attribute("gen_ai.output.messages", _messages_json([Message.assistant(state.output)]))
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.set_attribute("error.type", type(error).__name__)
        elif state.status.value in ("failed", "budget_exceeded", "cancelled"):
            span.set_status(Status(StatusCode.ERROR, state.error or state.status.value))
            span.set_attribute("error.type", state.error_kind or state.status.value)
        span.end()

    # -- events -----------------------------------------------------------------------------

    def recording(self, journal: RunJournal, data: EventData) -> None:
        attempt = self._attempts.get(id(journal))
        if attempt is None or attempt.traced or isinstance(data, AttemptTraced):
            return
        # Before the attempt's first event, so a run is never left with this as its last one.
        attempt.traced = True
        context = attempt.span.get_span_context()
        journal.record(AttemptTraced(trace_id=f"{context.trace_id:032x}", span_id=f"{context.span_id:016x}"))

    def recorded(self, journal: RunJournal, data: EventData) -> None:
        attempt = self._attempts.get(id(journal))
        if attempt is None:
            return
        if isinstance(data, ModelAttemptStarted):
            self._model_started(journal, attempt, data)
        elif isinstance(data, ModelCalled | ModelFailed | ModelContextRejected | GuardrailRejected):
            self._model_ended(attempt, data)
        elif isinstance(data, ModelRetryScheduled) and attempt.model is not None:
            attempt.model.add_event("retry_scheduled", {"retry_number": data.retry_number, "error": data.error})
        elif isinstance(data, ToolStarted):
            self._tool_started(journal, attempt, data)
        elif isinstance(data, ToolCompleted | ToolOutcomeUnknown | ApprovalRequested):
            self._tool_ended(journal, attempt, data)

    def _model_started(self, journal: RunJournal, attempt: _Attempt, data: ModelAttemptStarted) -> None:
        if attempt.model is not None:
            attempt.model.end()
        model = data.model or attempt.cfg.model.model_id
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(attempt.cfg),
            "gen_ai.request.model": model,
            "eudaimon.run_id": journal.run_id,
            "eudaimon.step": data.step,
        }
        if attempt.cfg.temperature is not None:
            attributes["gen_ai.request.temperature"] = attempt.cfg.temperature
        if attempt.cfg.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = attempt.cfg.max_tokens
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _messages_json(journal.state.messages)
        context = trace.set_span_in_context(attempt.span)
        attempt.model = self.tracer.start_span(
            f"chat {model}", context=context, kind=SpanKind.CLIENT, attributes=attributes, start_time=_ns()
        )

    def _model_ended(
        self, attempt: _Attempt, data: ModelCalled | ModelFailed | ModelContextRejected | GuardrailRejected
    ) -> None:
        span, attempt.model = attempt.model, None
        if span is None:
            return
        if not isinstance(data, ModelContextRejected):
            span.set_attribute("gen_ai.usage.input_tokens", data.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", data.usage.output_tokens)
            if data.model:
                span.set_attribute("gen_ai.response.model", data.model)
            if data.cost_usd is not None:
                span.set_attribute("eudaimon.cost_usd", data.cost_usd)
        if isinstance(data, ModelCalled):
            span.set_attribute("gen_ai.response.finish_reasons", [data.stop_reason])
            if data.request_id:
                span.set_attribute("eudaimon.request_id", data.request_id)
            if self.capture_content:
                span.set_attribute("gen_ai.output.messages", _messages_json([data.message]))
        elif isinstance(data, GuardrailRejected):
            span.set_attribute("eudaimon.guardrail_rejected", data.guardrail)
        else:
            span.set_status(Status(StatusCode.ERROR, data.error))
            span.set_attribute("error.type", type(data).__name__)
        span.end()

    def _tool_started(self, journal: RunJournal, attempt: _Attempt, data: ToolStarted) -> None:
        previous = attempt.tools.pop(data.call_id, None)
        if previous is not None:  # a retry: the attempt before it failed
            previous.set_status(Status(StatusCode.ERROR, "retried"))
            previous.end()
        tool = attempt.cfg.tools.get(data.tool)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": data.tool,
            "gen_ai.tool.call.id": data.call_id,
            "gen_ai.tool.type": "function",
            "eudaimon.run_id": journal.run_id,
            "eudaimon.tool.attempt": data.attempt,
        }
        if tool is not None:
            attributes["eudaimon.tool.effect"] = tool.effect.value
            if tool.description:
                attributes["gen_ai.tool.description"] = tool.description
        if self.capture_content:
            arguments = data.arguments  # what ran: decoded, validated, as approved
            attributes["gen_ai.tool.call.arguments"] = (
                arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
            )
        context = trace.set_span_in_context(attempt.span)
        span = self.tracer.start_span(
            f"execute_tool {data.tool}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(),
        )
        attempt.tools[data.call_id] = span
        self._tool_spans[(journal.run_id, data.call_id)] = span

    def _tool_ended(
        self, journal: RunJournal, attempt: _Attempt, data: ToolCompleted | ToolOutcomeUnknown | ApprovalRequested
    ) -> None:
        span = attempt.tools.pop(data.call_id, None)
        self._tool_spans.pop((journal.run_id, data.call_id), None)
        if span is None:
            return  # never executed here (denied, bad arguments), or a wait asked before it ran
        if isinstance(data, ToolCompleted):
            if data.child_run_id is not None:
                span.set_attribute("eudaimon.child_run_id", data.child_run_id)
            if data.cost_usd is not None:
                span.set_attribute("eudaimon.cost_usd", data.cost_usd)
            if self.capture_content:
                span.set_attribute("gen_ai.tool.call.result", data.output)
            if data.is_error:
                span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))
                span.set_attribute("error.type", "tool_error")
        else:
            outcome = "outcome_unknown" if isinstance(data, ToolOutcomeUnknown) else "awaiting_approval"
            span.set_attribute("eudaimon.tool.outcome", outcome)
            if data.child_run_id is not None:
                span.set_attribute("eudaimon.child_run_id", data.child_run_id)
            if isinstance(data, ToolOutcomeUnknown):
                span.set_status(Status(StatusCode.ERROR, "outcome unknown"))
        span.end()


__all__ = ["SpanObserver"]
