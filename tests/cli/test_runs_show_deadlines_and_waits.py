"""`eudaimon runs show` says when a waiting approval's deadline falls and what it does then, and
when a waiting call wakes; `runs events` names the timed-out, waiting and woken calls; a late
`runs approve` is refused saying the deadline passed, and what happens next."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from cli_support import Invoke

from eudaimon.core.events import (
    ApprovalRequested,
    ApprovalTimedOut,
    Event,
    EventData,
    ModelCalled,
    RunStarted,
    ToolStarted,
    ToolWaiting,
)
from eudaimon.core.messages import Message, ToolCall
from eudaimon.stores.sqlite import SqliteStore

SOON = datetime.now(UTC) + timedelta(hours=1)
PAST = datetime.now(UTC) - timedelta(minutes=1)


def _write(store_url: str, run_id: str, tail: list[EventData]) -> None:
    async def go() -> None:
        store = SqliteStore(store_url.removeprefix("sqlite:///"))
        call = ToolCall("c1", "send_wire", {"amount": 5})
        head: list[EventData] = [
            RunStarted(agent="bank", input="pay", messages=(Message.user("pay"),)),
            ModelCalled(step=0, request_id="r", message=Message.assistant("", tool_calls=[call])),
        ]
        at = datetime.now(UTC)
        await store.append(run_id, 0, [Event.of(run_id, i, at, e) for i, e in enumerate(head + tail)])
        await store.close()

    asyncio.run(go())


def test_runs_show_prints_the_deadline_and_the_wake(cli: Invoke, store_url: str) -> None:
    _write(store_url, "run_d", [ApprovalRequested(call_id="c1", tool="send_wire", deadline=SOON, on_timeout="cancel")])
    started = ToolStarted(call_id="c1", tool="send_wire", idempotency_key="k" * 64, attempt=1)
    _write(store_url, "run_w", [started, ToolWaiting(call_id="c1", tool="send_wire", attempt=1, wake_at=SOON)])

    shown = cli("runs", "show", "run_d", "--store", store_url)
    waiting = cli("runs", "show", "run_w", "--store", store_url)
    events = cli("runs", "events", "run_w", "--store", store_url)

    assert shown.exit_code == 0 and "deadline:" in shown.output and "the run is cancelled" in shown.output, shown.output
    assert waiting.exit_code == 0 and "waiting: c1 send_wire until" in waiting.output, waiting.output
    assert "waits until" in events.output, events.output


def test_a_late_approval_from_the_cli_is_refused(cli: Invoke, store_url: str) -> None:
    _write(store_url, "run_late", [ApprovalRequested(call_id="c1", tool="send_wire", deadline=PAST, timeout_s=60)])

    late = cli("runs", "approve", "run_late", "c1", "--store", store_url)
    events = cli("runs", "events", "run_late", "--store", store_url)

    assert late.exit_code != 0 and "deadline passed" in late.output, late.output
    assert "no decision within 1min" in events.output, events.output
    _ = ApprovalTimedOut


def test_a_passed_deadline_is_shown_without_a_command_that_would_be_refused(cli: Invoke, store_url: str) -> None:
    """Invariant: `runs show` of a call whose deadline passed (no server fired it yet) says it
    passed and what follows, and prints no `runs approve` command (it would be refused)."""
    _write(store_url, "run_over", [ApprovalRequested(call_id="c1", tool="send_wire", deadline=PAST, timeout_s=60)])

    shown = cli("runs", "show", "run_over", "--store", store_url)

    assert shown.exit_code == 0, shown.output
    assert "the deadline passed at" in shown.output and "the call is denied as the run goes on" in shown.output
    assert "eudaimon runs approve" not in shown.output


def test_a_refused_late_approval_says_how_the_run_goes_on(cli: Invoke, store_url: str) -> None:
    """Invariant: a late `runs approve` journals the deadline's denial, and the run, no longer
    waiting and driven by no one, is not left there silently: the command to resume it is
    printed, and `runs show` prints it too."""
    _write(store_url, "run_late", [ApprovalRequested(call_id="c1", tool="send_wire", deadline=PAST, timeout_s=60)])

    late = cli("runs", "approve", "run_late", "c1", "--store", store_url)
    shown = cli("runs", "show", "run_late", "--store", store_url)

    resume = f"eudaimon runs resume run_late --agent MODULE:ATTR --store {store_url}"
    assert late.exit_code == 1 and "deadline passed" in late.output and resume in late.output, late.output
    assert "status  running" in shown.output and resume in shown.output, shown.output
