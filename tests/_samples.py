"""One instance of every event payload, for round-trip and contract tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from eudaimon.core import events as ev
from eudaimon.core.events import EVENT_TYPES, Event, EventData
from eudaimon.core.messages import DocumentPart, ImagePart, Message, TextPart, ToolCall, ToolSpec, Usage
from eudaimon.core.settings import ModelSettings

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def one_of_each() -> list[EventData]:
    call = ToolCall("call_1", "pay", {"amount": 5, "to": "bob"})
    payloads: list[EventData] = [
        ev.RunStarted(
            agent="a",
            input="héllo ✓",
            messages=(
                Message.system("sys", id="m0"),
                Message.user(
                    [TextPart(text="héllo ✓"), ImagePart(data=b"\x89PNG\x00\xff" * 300, media_type="image/png")],
                    id="m1",
                ),
            ),
            thread_id="t1",
            config_digest="abc",
            version="v1",
            fingerprint=(("model", "scripted"), ("tool:pay:schema", "0" * 16), ("tool:pay:effect", "write")),
            replay_of="run_original",
            parent=ev.ParentRef("run_parent", 3),
            model="scripted",
            guardrail_retries=2,
            tools=(
                ev.ToolRecord(
                    name="fs_read",
                    description="read",
                    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
                    effect="read",
                    source="mcp:stdio:server",
                    remote_name="read",
                ),
            ),
            parent_call=ev.CallRef("run_up", "call_9"),
            model_settings=ModelSettings(temperature=0.1, stop_sequences=("END",), extra_body={"x": [1]}),
        ),
        ev.ModelAttemptStarted(
            step=1,
            request_id="r1",
            request_digest="d",
            model="scripted",
            tools_digest="t" * 64,
            tools=(ToolSpec("pay", "Pay someone.", {"type": "object", "properties": {}}),),
        ),
        ev.ModelRetryScheduled(
            step=1, request_id="r1", retry_number=1, delay_ms=250, error="429", observed_usage=Usage(3, 0, 1)
        ),
        ev.ModelContextRejected(step=1, request_id="r1", input_budget_tokens=900, error="too long"),
        ev.ModelCalled(
            step=1,
            request_id="r1",
            message=Message.assistant("paying", [call, ToolCall("call_2", "pay", '{"amount": 1')], id="m2"),
            usage=Usage(10, 5, 2),
            cost_usd=0.001,
            model="gpt-4o",
            duration_ms=12,
            stop_reason="tool_use",
        ),
        ev.ModelFailed(step=1, error="boom", usage=Usage(1, 1), cost_usd=None, request_id="r1", model="m"),
        ev.GuardrailRejected(step=2, guardrail="G", feedback="shorter", usage=Usage(4, 4), cost_usd=0.5, model="m"),
        ev.ApprovalRequested(call_id="call_1", tool="pay", arguments={"amount": 5}, reason="irreversible"),
        ev.ApprovalDecided(call_id="call_1", approved=True, by="ann", note="ok"),
        ev.ToolDenied(call_id="call_2", tool="pay", reason="no"),
        ev.ToolStarted(call_id="call_1", tool="pay", idempotency_key="k" * 64, attempt=2),
        ev.ToolCompleted(
            call_id="call_1",
            tool="pay",
            output='{"ok": true}',
            is_error=False,
            duration_ms=3,
            parts=(
                ImagePart(url="https://example.com/r.png"),
                DocumentPart(data=b"%PDF-1.7", media_type="application/pdf"),
            ),
            retry=True,
        ),
        ev.ToolOutcomeUnknown(call_id="call_1", tool="pay"),
        ev.ToolReconciled(call_id="call_1", output="paid", retry=False, by="ops"),
        ev.ToolCompleted(
            call_id="call_2", tool="ask", output="yes", child_run_id="run_child", usage=Usage(7, 3), cost_usd=0.25
        ),
        ev.HandedOff(call_id="call_2", agent="billing", to_run_id="run_child"),
        ev.AttemptTraced(trace_id="0" * 32, span_id="1" * 16),
        ev.RunTakenOver(owner="host:2:beef.0", orphaned_ms=57_000, previous_owner="host:1:cafe.0", interrupted_seq=4),
        ev.FinishRejected(step=3, reason="not JSON", by_validator=True),
        ev.BudgetExceeded(reason="usd", spent=1.5, limit=1.0),
        ev.RunCompleted(output="done", structured={"a": [1, 2, {"b": None}]}),
        ev.RunFailed(error="bad", kind="MaxIterations"),
        ev.RunCancelled(reason="user", by="ann"),
        ev.RunQueued(
            agent="a",
            input="pay 5 to ALICE",
            thread_id="t1",
            memory_thread="t1",
            principal="alice",
            request={"input": "0" * 64, "thread_id": "1" * 64},
        ),
        ev.AgentReplaced(
            version="v2",
            previous_version="v1",
            fingerprint=(("model", "m"), ("tool:pay:effect", "write")),
            changes=("tool pay: schema changed",),
            voided=("call_1",),
        ),
    ]
    payloads += [  # issue 36's, at the end: tests index the ones above
        ev.ApprovalTimedOut(
            call_id="call_1",
            deadline=datetime(2026, 12, 1, 10, tzinfo=UTC),
            action="cancel",
            note="no decision within 1h",
        ),
        ev.ToolWaiting(
            call_id="call_1",
            tool="pay",
            attempt=1,
            wake_at=datetime(2026, 12, 1, 11, tzinfo=UTC),
            reason="rate limited",
        ),
        ev.ToolWoke(call_id="call_1"),
    ]
    assert {type(p) for p in payloads} == set(EVENT_TYPES), "a new event type needs a sample here"
    return payloads


def as_events(run_id: str, payloads: list[EventData]) -> list[Event]:
    return [Event.of(run_id, seq, T0 + timedelta(milliseconds=seq), p) for seq, p in enumerate(payloads)]
