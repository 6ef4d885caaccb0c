"""`SpanObserver`: spans made from what a run records, as it records it.

A model call's span runs from its `model_attempt_started` to its outcome, a tool's from its
`tool_started` intent to its `tool_completed` (or unknown outcome, or suspension): only what
this process executes gets a span, and what a resumed run reads back from its journal gets
none. Each attempt to drive a run journals the ids of its span (`attempt_traced`), so a later
attempt, in any process, links to it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import metrics, trace
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
from eudaimon.runtime.loop.clock import now
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal

if TYPE_CHECKING:
    from eudaimon.models.base import ChatRequest, ChatResponse

_VERSION = "0.1.0"

TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
"""`gen_ai.client.token.usage`'s explicit bucket boundaries, as the GenAI conventions give them."""
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
"""`gen_ai.client.operation.duration`'s explicit bucket boundaries (seconds), as the conventions give them."""


@dataclass(slots=True)
class _Attempt:
    span: Span
    cfg: RuntimeConfig
    traced: bool = False
    """True once its `attempt_traced` event is recorded."""
    model: Span | None = None
    model_started: float = 0.0
    """`perf_counter()` when the open model span started (the operation's duration)."""
    model_metric: dict[str, Any] = field(default_factory=dict)
    """The open model call's attributes for the client metrics."""
    model_error: str | None = None
    tools: dict[str, Span] = field(default_factory=dict)


def _ns(at: datetime | None = None) -> int:
    return int((at or now()).timestamp() * 1_000_000_000)


def _provider(cfg: RuntimeConfig) -> str:
    named = getattr(cfg.model, "provider", None)
    if isinstance(named, str) and named:
        return named
    return type(cfg.model).__name__.removesuffix("Model").lower() or "unknown"


def _server(cfg: RuntimeConfig) -> dict[str, Any]:
    """`server.address` and `server.port` of a provider model's API (none for a local model)."""
    url = getattr(cfg.model, "base_url", None)
    if not isinstance(url, str) or not url:
        return {}
    parts = urlsplit(url)
    if not parts.hostname:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"server.address": parts.hostname, "server.port": port}


def _tool_definitions(request: ChatRequest) -> str:
    tools = [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
        for t in request.tools
    ]
    return json.dumps(tools, ensure_ascii=False, default=str)


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

    def __init__(
        self, tracer_provider: Any = None, *, capture_content: bool = False, meter_provider: Any = None
    ) -> None:
        self.tracer = trace.get_tracer("eudaimon", _VERSION, tracer_provider=tracer_provider)
        self.capture_content = capture_content
        meter = metrics.get_meter("eudaimon", _VERSION, meter_provider=meter_provider)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
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
        metric: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": _provider(attempt.cfg),
            "gen_ai.request.model": model,
            **_server(attempt.cfg),
        }
        attributes: dict[str, Any] = {
            **metric,
            "gen_ai.agent.name": attempt.cfg.agent,
            "eudaimon.run_id": journal.run_id,
            "eudaimon.step": data.step,
        }
        if journal.state.thread_id:
            attributes["gen_ai.conversation.id"] = journal.state.thread_id
        if attempt.cfg.temperature is not None:
            attributes["gen_ai.request.temperature"] = attempt.cfg.temperature
        if attempt.cfg.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = attempt.cfg.max_tokens
        if self.capture_content:
            state_messages = journal.state.messages
            attributes["gen_ai.input.messages"] = _messages_json(state_messages)
            system = [{"type": "text", "content": m.content} for m in state_messages if m.role.value == "system"]
            if system:
                attributes["gen_ai.system_instructions"] = json.dumps(system, ensure_ascii=False)
        context = trace.set_span_in_context(attempt.span)
        attempt.model = self.tracer.start_span(
            f"chat {model}", context=context, kind=SpanKind.CLIENT, attributes=attributes, start_time=_ns()
        )
        attempt.model_started = time.perf_counter()
        attempt.model_metric = metric
        attempt.model_error = None

    def model_answered(
        self, journal: RunJournal, request: ChatRequest, response: ChatResponse | None, error: BaseException | None
    ) -> None:
        """What only the call itself knows: the request's parameters as sent, the tools
        offered, the provider's response id, or the error's type."""
        attempt = self._attempts.get(id(journal))
        span = None if attempt is None else attempt.model
        if attempt is None or span is None:
            return
        settings = request.settings
        asked: dict[str, Any] = {
            "gen_ai.request.temperature": request.temperature,
            "gen_ai.request.max_tokens": request.max_tokens,
            "gen_ai.request.top_p": settings.top_p,
            "gen_ai.request.seed": settings.seed,
            "gen_ai.request.stop_sequences": list(settings.stop_sequences) if settings.stop_sequences else None,
        }
        span.set_attributes({k: v for k, v in asked.items() if v is not None})
        span.set_attribute("gen_ai.output.type", "json" if request.output is not None else "text")
        if request.tools and self.capture_content:  # opt-in in the conventions: schemas can be large
            span.set_attribute("gen_ai.tool.definitions", _tool_definitions(request))
        if error is not None:
            attempt.model_error = type(error).__name__
            span.set_attribute("error.type", attempt.model_error)
            return
        if response is not None:
            response_id = response.extra.get("id")
            if isinstance(response_id, str) and response_id:
                span.set_attribute("gen_ai.response.id", response_id)

    def _model_ended(
        self, attempt: _Attempt, data: ModelCalled | ModelFailed | ModelContextRejected | GuardrailRejected
    ) -> None:
        span, attempt.model = attempt.model, None
        if span is None:
            return
        metric = dict(attempt.model_metric)
        if not isinstance(data, ModelContextRejected):
            span.set_attribute("gen_ai.usage.input_tokens", data.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", data.usage.output_tokens)
            if data.usage.cached_tokens:
                span.set_attribute("gen_ai.usage.cache_read.input_tokens", data.usage.cached_tokens)
            if data.model:
                span.set_attribute("gen_ai.response.model", data.model)
                metric["gen_ai.response.model"] = data.model
            if data.cost_usd is not None:
                span.set_attribute("eudaimon.cost_usd", data.cost_usd)
        self._measure(attempt, data, metric)
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
            span.set_attribute("error.type", attempt.model_error or type(data).__name__)
        span.end()

    def _measure(
        self,
        attempt: _Attempt,
        data: ModelCalled | ModelFailed | ModelContextRejected | GuardrailRejected,
        metric: dict[str, Any],
    ) -> None:
        """The GenAI client metrics of one model call: its duration, and its tokens by type."""
        if isinstance(data, ModelCalled) and data.short_circuited_by:
            return  # middleware answered: no model was called
        failed = isinstance(data, ModelFailed | ModelContextRejected)
        if failed:
            metric["error.type"] = attempt.model_error or type(data).__name__
        self.operation_duration.record(time.perf_counter() - attempt.model_started, metric)
        if isinstance(data, ModelContextRejected):
            return  # refused before any token was counted
        usage = data.usage
        if usage.input_tokens or usage.output_tokens:
            base = {k: v for k, v in metric.items() if k != "error.type"}
            self.token_usage.record(usage.input_tokens, {**base, "gen_ai.token.type": "input"})
            self.token_usage.record(usage.output_tokens, {**base, "gen_ai.token.type": "output"})

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
            "gen_ai.agent.name": attempt.cfg.agent,
            "eudaimon.run_id": journal.run_id,
            "eudaimon.tool.attempt": data.attempt,
        }
        if journal.state.thread_id:
            attributes["gen_ai.conversation.id"] = journal.state.thread_id
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
