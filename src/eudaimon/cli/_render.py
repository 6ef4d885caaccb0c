"""How the CLI shows journals: one-line event summaries, timelines, states, messages, streams."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, assert_never

from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from eudaimon.cli._escape import shown, visible
from eudaimon.core.edits import edit_text
from eudaimon.core.events import (
    AgentReplaced,
    ApprovalDecided,
    ApprovalRequested,
    ApprovalTimedOut,
    AttemptTraced,
    BudgetExceeded,
    Event,
    FailureKind,
    FinishRejected,
    GuardrailRejected,
    HandedOff,
    ModelAttemptStarted,
    ModelCalled,
    ModelContextRejected,
    ModelFailed,
    ModelRetryScheduled,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunQueued,
    RunStarted,
    RunTakenOver,
    ToolCompleted,
    ToolDenied,
    ToolOutcomeUnknown,
    ToolReconciled,
    ToolStarted,
    ToolWaiting,
    ToolWoke,
)
from eudaimon.core.messages import (
    ContentPart,
    ImagePart,
    JsonObject,
    Message,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
    describe_part,
)
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process.takeover import taken_over_line
from eudaimon.streaming import (
    Done,
    Error,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from eudaimon.streaming import Usage as UsageDelta

_STATUS_STYLE = {
    Status.RUNNING: "cyan",
    Status.AWAITING_APPROVAL: "yellow",
    Status.AWAITING_RECONCILIATION: "yellow",
    Status.COMPLETED: "green",
    Status.FAILED: "red",
    Status.BUDGET_EXCEEDED: "red",
    Status.CANCELLED: "magenta",
    Status.QUEUED: "blue",
    Status.WAITING: "blue",
}


def print_listing(console: Console, table: Table) -> None:
    """Print a listing whole: narrower than the table needs (an 80-column terminal, long ids),
    Rich would cut ids to `…` and squeeze columns to nothing; a row the terminal wraps is
    better than an id that cannot be copied or a column gone."""
    console.width = max(console.width, Measurement.get(console, console.options.update_width(10_000), table).minimum)
    console.print(table)


def clip(text: str, limit: int = 80) -> str:
    """`text` on one line, its control characters spelled out, cut to `limit` characters with
    an ellipsis."""
    flat = visible(" ".join(text.split()), newlines=False)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def status_text(status: Status | str) -> Text:
    value = Status(status)
    return Text(value.value, style=_STATUS_STYLE[value])


def arguments_text(arguments: JsonObject | str) -> str:
    """Arguments on one line, in one spelling: a model's raw text (the journal keeps it as sent,
    line breaks and all) is shown as the object a tool would get from it; text no tool would
    take (not JSON, a repeated key) is shown as it is."""
    from eudaimon.tools._tool import ToolArgumentsError, decode_arguments  # pydantic: not for `eudaimon --help`

    decoded: object = arguments
    if isinstance(arguments, str):
        try:
            decoded = decode_arguments(arguments, "")
        except ToolArgumentsError:
            return arguments
    return json.dumps(decoded, ensure_ascii=False, separators=(", ", ": "))


def call_text(call: ToolCall) -> str:
    return f"{call.name}({arguments_text(call.arguments)})"


def usage_text(usage: Usage) -> str:
    cached = f" ({usage.cached_tokens} cached)" if usage.cached_tokens else ""
    return f"{usage.input_tokens} in{cached} / {usage.output_tokens} out tokens"


def cost_text(cost_usd: float | None, known: bool = True) -> str:
    """Money in the inspector's style (`money` in its shared.js): "unpriced" when no price is
    known, never $0 for it; 4 decimals under a dollar, 2 above."""
    if cost_usd is None or not known:
        return "unpriced"
    if cost_usd == 0:
        return "$0.00"
    if cost_usd < 0.0001:
        return "<$0.0001"
    return f"${cost_usd:.2f}" if cost_usd >= 1 else f"${cost_usd:.4f}"


def failure_text(kind: FailureKind | None, guardrail: str, error: str | None) -> str:
    """Why a run failed, in one line: the kind, unless the error text already names the
    exception (it starts with its type), and the guardrail that blocked."""
    shown = f"{kind}: " if kind is not None and kind not in (FailureKind.EXCEPTION, FailureKind.MODEL_ERROR) else ""
    who = f"{guardrail}: " if guardrail else ""
    return f"{shown}{who}{error or ''}"


def summarize(event: Event) -> str:
    """One line saying what `event` recorded."""
    data = event.data
    match data:
        case RunStarted():
            thread = f", thread {data.thread_id}" if data.thread_id else ""
            fork = f", forked from {data.parent.run_id}@{data.parent.seq}" if data.parent else ""
            child = f", child of {data.parent_call.run_id} call {data.parent_call.call_id}" if data.parent_call else ""
            version = f" {data.version}" if data.version else ""
            replay = f", replay of {data.replay_of}" if data.replay_of else ""
            return (
                f"agent {data.agent!r}{version}, {len(data.messages)} message(s){thread}{fork}{child}{replay}: "
                f"{clip(data.input, 50)!r}"
            )
        case RunQueued():
            thread = f", thread {data.thread_id}" if data.thread_id else ""
            by = f", asked by {data.principal}" if data.principal else ""
            return f"agent {data.agent!r}, queued{thread}{by}: {clip(data.input, 50)!r}"
        case ModelAttemptStarted():
            offered = (
                f", offering {', '.join(t.name for t in data.tools) or 'no tools'}" if data.tools is not None else ""
            )
            return f"step {data.step}: calling {data.model or 'the model'} (request {data.request_id[:12]}){offered}"
        case ModelRetryScheduled():
            return f"step {data.step}: retry {data.retry_number} in {data.delay_ms} ms after {clip(data.error, 50)}"
        case ModelContextRejected():
            out = f", output budget {data.output_budget_tokens}" if data.output_budget_tokens is not None else ""
            return (
                f"step {data.step}: context too long (retry {data.retry_number}); "
                f"input budget now {data.input_budget_tokens} tokens{out}"
            )
        case ModelCalled():
            said = f"{clip(data.message.content, 50)!r} " if data.message.content else ""
            calls = ", ".join(call_text(c) for c in data.message.tool_calls)
            asked = f"→ {clip(calls, 60)} " if calls else ""
            if data.short_circuited_by:
                return f"step {data.step}: {said}{asked}[answered by middleware {data.short_circuited_by}; no model called]"
            stopped = f", {stop_text(data.stop_reason)}" if data.stop_reason in NOTABLE_STOPS else ""
            return f"step {data.step}: {said}{asked}[{usage_text(data.usage)}, {cost_text(data.cost_usd)}{stopped}]"
        case ModelFailed():
            return f"step {data.step}: {clip(data.error, 70)}"
        case GuardrailRejected():
            return f"step {data.step}: {data.guardrail} asked again: {clip(data.feedback, 60)}"
        case ApprovalRequested():
            reason = f" — {data.reason}" if data.reason else ""
            # Whole: an approver must see every argument of the call they decide.
            return f"{data.call_id}: {data.tool}({visible(arguments_text(data.arguments))}) awaits a human{reason}"
        case ApprovalDecided():
            verdict = "approved" if data.approved else "denied"
            by = f" by {data.by}" if data.by else ""
            note = f": {clip(data.note, 40)}" if data.note else ""
            if data.arguments is not None:  # whole, as an approval request is: what was changed, and to what
                edit = edit_text(data.original_arguments, data.arguments, 2000)
                return f"{data.call_id}: {verdict}{by} with edited arguments ({visible(edit)}){note}"
            return f"{data.call_id}: {verdict}{by}{note}"
        case ApprovalTimedOut():
            then = "run cancelled" if data.action == "cancel" else "denied"
            return f"{data.call_id}: {data.note} ({then} at the deadline {data.deadline.isoformat(timespec='seconds')})"
        case ToolWaiting():
            why = f": {clip(data.reason, 40)}" if data.reason else ""
            return f"{data.call_id}: {data.tool} waits until {data.wake_at.isoformat(timespec='seconds')}{why}"
        case ToolWoke():
            return f"{data.call_id}: woke; runs again"
        case ToolDenied():
            return f"{data.call_id}: {data.tool} denied{': ' + clip(data.reason, 50) if data.reason else ''}"
        case ToolStarted():
            return f"{data.call_id}: {data.tool} attempt {data.attempt} (key {data.idempotency_key[:12]}…)"
        case ToolCompleted():
            flag = "error: " if data.is_error else ""
            child = f", child run {data.child_run_id}" if data.child_run_id else ""
            return f"{data.call_id}: {data.tool} → {flag}{clip(data.output, 60)} ({data.duration_ms} ms{child})"
        case ToolOutcomeUnknown():
            where = f" in child run {data.child_run_id}" if data.child_run_id else ""
            return f"{data.call_id}: {data.tool} started and never finished{where}; reconcile it"
        case HandedOff():
            return f"{data.call_id}: handed the conversation to {data.agent!r} (run {data.to_run_id})"
        case AttemptTraced():
            return f"traced as span {data.span_id} of trace {data.trace_id}"
        case RunTakenOver():
            return taken_over_line(data)
        case ToolReconciled():
            how = "retry" if data.retry else f"output {clip(data.output or '', 50)!r}"
            by = f" by {data.by}" if data.by else ""
            return f"{data.call_id}: settled with {how}{by}"
        case FinishRejected():
            return f"step {data.step}: {clip(data.reason, 70)}"
        case BudgetExceeded():
            return f"{clip(data.reason, 50)} (spent {data.spent:g} of {data.limit:g})"
        case RunCompleted():
            return clip(data.output, 80)
        case RunFailed():
            return clip(failure_text(data.kind, data.guardrail, data.error), 80)
        case RunCancelled():
            return clip(data.reason or "cancelled", 80)
        case AgentReplaced():
            versions = f"{data.previous_version or '?'} -> {data.version or '?'}"
            voided = f"; approvals void: {', '.join(data.voided)}" if data.voided else ""
            return f"agent changed ({versions}): {clip('; '.join(data.changes) or 'unnamed parts', 90)}{voided}"
        case _:
            assert_never(data)


NOTABLE_STOPS = {
    "max_tokens": "cut by the token limit",
    "refusal": "the model refused",
    "content_filter": "withheld by the provider's content filter",
    "pause_turn": "paused by the provider",
}
"""Stop reasons that say an answer is not the model's whole, finished turn."""


def stop_text(reason: str) -> str:
    """`stopped: max_tokens (cut by the token limit)`."""
    return f"stopped: {reason} ({NOTABLE_STOPS[reason]})" if reason in NOTABLE_STOPS else f"stopped: {reason}"


def early_stops(events: Sequence[Event]) -> list[str]:
    """`step N: stopped: …` for each model call that did not end its turn as it meant to."""
    return [
        f"step {e.data.step}: {stop_text(e.data.stop_reason)}"
        for e in events
        if isinstance(e.data, ModelCalled) and e.data.stop_reason in NOTABLE_STOPS
    ]


def timeline_table(events: Sequence[Event], title: str | None = None) -> Table:
    """seq, time since the first event, type and summary of each event."""
    table = Table(title=shown(title, newlines=False) if title else None, title_justify="left", show_lines=False)
    table.add_column("seq", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("type", no_wrap=True, style="bold")
    table.add_column("summary", overflow="fold")
    start = events[0].at if events else None
    for event in events:
        offset = (event.at - start).total_seconds() if start is not None else 0.0
        table.add_row(str(event.seq), f"+{offset:.3f}s", shown(event.type), shown(summarize(event), newlines=False))
    return table


def messages_table(messages: Sequence[Message]) -> Table:
    table = Table(show_lines=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("role", no_wrap=True)
    table.add_column("content", overflow="fold")
    for index, message in enumerate(messages):
        table.add_row(str(index), _role_label(message), shown(_message_body(message)))
    return table


def _role_label(message: Message) -> Text:
    if message.role is Role.TOOL:
        return shown(f"tool {message.tool_call_id}", "red" if message.is_error else "blue", newlines=False)
    style = {Role.SYSTEM: "dim", Role.USER: "bold", Role.ASSISTANT: "green"}.get(message.role, "")
    return Text(message.role.value, style=style)


def _message_body(message: Message) -> str:
    lines = [message.content] if message.content else []
    if message.parts and message.role is not Role.TOOL:  # a tool's text already names its parts
        shown = [describe_part(p) for p in message.parts]
        lines = [*shown, *lines] if message.role is Role.ASSISTANT else shown  # an assistant's: its thinking
    lines += [f"→ {call_text(c)}  [{c.id}]" for c in message.tool_calls]
    if message.role is Role.TOOL and message.is_error:
        lines = [f"error: {line}" for line in lines]
    return "\n".join(lines)


def overview(state: RunState, event_count: int | None = None) -> Table:
    """The run's facts as a two-column grid."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("run", shown(state.run_id, newlines=False))
    grid.add_row("status", status_text(state.status))
    grid.add_row("agent", shown(state.agent, newlines=False))
    if state.version:
        grid.add_row("version", shown(state.version, newlines=False))
    for version, changes in state.agent_changes:
        said = "; ".join(changes) or "unnamed parts"
        grid.add_row("agent changed", shown(f"to {version or '?'}: {said}", newlines=False))
    if state.replay_of is not None:
        grid.add_row("replay of", shown(state.replay_of, newlines=False))
    grid.add_row("thread", shown(state.thread_id or "-", newlines=False))
    grid.add_row("model", shown(state.model or "-", newlines=False))
    if state.parent is not None:
        grid.add_row("forked from", shown(f"{state.parent.run_id} at seq {state.parent.seq}", newlines=False))
    grid.add_row("steps", str(state.steps))
    grid.add_row("usage", usage_text(state.usage))
    grid.add_row("cost", cost_text(state.cost_usd, state.cost_known))
    grid.add_row("events", str(event_count if event_count is not None else state.next_seq))
    if state.output is not None:
        grid.add_row("output", shown(state.output))
    if state.error is not None:
        grid.add_row("error", shown(failure_text(state.error_kind, state.error_guardrail, state.error), "red"))
    return grid


def state_view(state: RunState, after: Event) -> Group:
    """The folded state after event `after`: facts, the current tool batch, then the messages."""
    facts = overview(state)
    facts.add_row("after", f"seq {after.seq} ({after.type})")
    facts.add_row("next_seq", str(state.next_seq))
    if state.open_attempt is not None:
        facts.add_row("open attempt", shown(state.open_attempt, newlines=False))
    if state.finish_rejections:
        facts.add_row("finish rejections", str(state.finish_rejections))
    parts: list[Any] = [facts]
    if state.calls:
        calls = Table(title="tool calls of the current batch", title_justify="left")
        for name in ("call", "status", "attempt", "request"):
            calls.add_column(name, overflow="fold")
        for call_id, progress in state.calls.items():
            calls.add_row(
                shown(call_id, newlines=False),
                progress.status.value,
                str(progress.attempt),
                shown(call_text(_as_call(progress.call))),
            )
        parts.append(calls)
    pending = ", ".join(p.id for p in state.pending) or "none"
    parts.append(shown(f"pending calls: {pending}", newlines=False))
    parts.append(messages_table(state.messages))
    return Group(*parts)


def _as_call(pending: Any) -> ToolCall:
    return ToolCall(pending.id, pending.name, pending.arguments)


def state_to_dict(state: RunState) -> dict[str, Any]:
    """The folded state as plain JSON-able data, for `runs state --json` and scripts."""
    return {
        "run_id": state.run_id,
        "status": state.status.value,
        "agent": state.agent,
        "thread_id": state.thread_id,
        "model": state.model,
        "steps": state.steps,
        "usage": asdict(state.usage),
        "cost_usd": state.cost_usd if state.cost_known else None,  # null: unpriced, as the API says
        "next_seq": state.next_seq,
        "pending": [asdict(p) for p in state.pending],
        "calls": {k: {"status": p.status.value, "attempt": p.attempt} for k, p in state.calls.items()},
        "messages": [_message_dict(m) for m in state.messages],
        "output": state.output,
        "error": state.error,
        "stop_reason": state.stop_reason,
        "version": state.version,
        "replay_of": state.replay_of,
        "agent_changes": [{"version": v, "changes": list(c)} for v, c in state.agent_changes],
    }


def _message_dict(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "role": message.role.value,
        "content": message.content,
        "tool_calls": [asdict(c) for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
        "is_error": message.is_error,
        **({"parts": [_part_dict(p) for p in message.parts]} if message.parts else {}),
    }


def _part_dict(part: ContentPart) -> dict[str, Any]:
    """A part as the CLI shows it: its kind, type and size, never its bytes."""
    if isinstance(part, TextPart):
        return {"kind": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        return {"kind": "thinking", "redacted": True} if part.redacted else {"kind": "thinking", "text": part.thinking}
    shown: dict[str, Any] = {"kind": part.kind, "media_type": part.media_type}
    if isinstance(part, ImagePart) and part.url is not None:
        shown["url"] = part.url
    else:
        shown["bytes"] = len(part.data or b"")
    return shown


class StreamPrinter:
    """Prints a run's `StreamEvent`s as they arrive: text inline, tool calls and results on lines."""

    def __init__(self, console: Console, names: dict[str, str] | None = None) -> None:
        """`names`: tool names by call id, for results of calls made before this stream began
        (a resumed run's calls in flight)."""
        self._console = console
        self._in_text = False
        self._names: dict[str, str] = dict(names or {})
        self._arguments: dict[str, list[str]] = {}
        self.done: Done | None = None

    def show(self, event: StreamEvent) -> None:
        match event:
            case TextDelta():
                if not self._in_text:
                    self._console.print(Text("assistant ", style="bold green"), end="")
                    self._in_text = True
                self._console.print(shown(event.text), end="", soft_wrap=True)
            case ToolCallStart():
                self._end_line()
                self._names[event.id] = event.name
                self._arguments[event.id] = []
            case ToolCallDelta():
                self._arguments.setdefault(event.id, []).append(event.arguments_delta)
            case ToolCallEnd():
                args = arguments_text("".join(self._arguments.pop(event.id, [])))
                line = Text("  → ", style="cyan")
                line.append(shown(f"{self._names.get(event.id, '?')}({args})"))
                line.append(shown(f"  [{event.id}]", "dim", newlines=False))
                self._console.print(line, soft_wrap=True)
            case ToolResult():
                self._end_line()
                line = Text("  ← ", style="red" if event.is_error else "blue")
                line.append(shown(f"{self._names.get(event.id, event.id)}: ", newlines=False))
                line.append(clip(event.content, 200), style="red" if event.is_error else "")
                self._console.print(line, soft_wrap=True)
            case UsageDelta():
                self._end_line()
                cost = f", ${event.estimated_cost:.6f}" if event.estimated_cost else ""
                self._console.print(
                    Text(
                        f"  · iteration {event.iteration}: {event.input_tokens} in / {event.output_tokens} out{cost}",
                        style="dim",
                    )
                )
            case Error():
                self._end_line()
                self._console.print(shown(f"  ! {event.message}", "yellow"), soft_wrap=True)
            case Done():
                self._end_line()
                self.done = event
            case _:
                assert_never(event)

    def _end_line(self) -> None:
        if self._in_text:
            self._console.print()
            self._in_text = False


def edited_calls(events: Sequence[Event]) -> list[str]:
    """A line per call a human approved with edited arguments: who changed what, from what to
    what; the conversation shows the model's arguments, and these are what ran."""
    asked: dict[str, Any] = {}
    lines = []
    for event in events:
        data = event.data
        if isinstance(data, ApprovalRequested):
            asked[data.call_id] = (data.tool, data.arguments)
        elif isinstance(data, ApprovalDecided) and data.arguments is not None:
            tool, original = asked.get(data.call_id, ("?", None))
            if data.original_arguments is not None:
                original = data.original_arguments
            change = edit_text(original, data.arguments, 2000)
            lines.append(f"{data.call_id}: {tool} edited by {data.by or 'someone'} before it ran: {change}")
    return lines
