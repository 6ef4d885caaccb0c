"""Fixtures for the journal tests: one `store` fixture over every backend, and `samples`.

To run the contract suite against another backend, add a factory to `STORE_FACTORIES` and a
param to `STORE_PARAMS` (with the marks it needs, e.g. `pytest.mark.postgres`). A factory gets
the test's `tmp_path` and must return an EMPTY store: the suite asserts on `list_runs()`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from eudaimon.core.events import (
    AgentReplaced,
    ApprovalDecided,
    ApprovalRequested,
    ApprovalTimedOut,
    AttemptTraced,
    BudgetExceeded,
    Event,
    EventData,
    FinishRejected,
    GuardrailRejected,
    HandedOff,
    ModelAttemptStarted,
    ModelCalled,
    ModelContextRejected,
    ModelFailed,
    ModelRetryScheduled,
    ParentRef,
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
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.stores import EventStore, MemoryStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.sqlite import SqliteStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


class ScratchPostgresStore(PostgresStore):
    """A `PostgresStore` in a fresh schema of its own, dropped when the store is closed.

    The server is not probed here: if it is down, the store's first use fails the test with a
    JournalError naming the host and database (CI starts PostgreSQL; nothing is skipped).
    """

    def __init__(self) -> None:
        super().__init__(PG_DSN, schema=f"eudaimon_test_{uuid.uuid4().hex}")

    async def close(self) -> None:
        await super().close()
        try:
            async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        except psycopg.OperationalError:
            pass  # the server is unreachable: the test itself already failed saying so


STORE_FACTORIES: dict[str, Callable[[Path], EventStore]] = {
    "memory": lambda tmp_path: MemoryStore(),
    "sqlite": lambda tmp_path: SqliteStore(tmp_path / "runs.db"),
    "postgres": lambda tmp_path: ScratchPostgresStore(),
}
STORE_PARAMS = [
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=STORE_PARAMS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    """An empty store of each backend, closed after the test."""
    built = STORE_FACTORIES[request.param](tmp_path)
    try:
        yield built
    finally:
        await built.close()


def every_payload() -> list[EventData]:
    """One instance of each payload class; run_started first, a terminal one last.

    Non-default values everywhere a default exists, so a store that drops a field is caught.
    """
    call = ToolCall("call-1", "transfer", {"amount": 10, "to": "bob", "memo": "ünïcode ✓"})
    raw = ToolCall("call-2", "lookup", '{"q": "raw json string"}')
    return [
        RunStarted(
            agent="banker",
            input="pay bob",
            messages=(Message.system("be careful", id="m0"), Message.user("pay bob", id="m1")),
            thread_id="thread-a",
            config_digest="cfg-1",
            parent=ParentRef("parent-run", 4),
            model="test:model",
            guardrail_retries=1,
        ),
        ModelAttemptStarted(step=0, request_id="req-0", request_digest="d0", model="test:model"),
        ModelRetryScheduled(
            step=0,
            request_id="req-0",
            retry_number=1,
            delay_ms=250,
            error="rate limited",
            observed_usage=Usage(3, 0, 1),
        ),
        ModelContextRejected(step=0, request_id="req-0", input_budget_tokens=4096, error="too long"),
        ModelFailed(step=0, error="500", usage=Usage(5, 1), cost_usd=0.001, request_id="req-0", model="test:model"),
        GuardrailRejected(step=0, guardrail="no-pii", feedback="remove the name", usage=Usage(7, 2), cost_usd=0.002),
        ModelCalled(
            step=1,
            request_id="req-1",
            message=Message.assistant("calling", [call, raw], id="m2"),
            usage=Usage(10, 20, 5),
            cost_usd=0.01,
            model="test:model",
            duration_ms=123,
            stop_reason="tool_use",
        ),
        ApprovalRequested(call_id="call-1", tool="transfer", arguments={"amount": 10}, reason="irreversible"),
        ApprovalDecided(call_id="call-1", approved=True, by="alice", note="ok"),
        ApprovalTimedOut(
            call_id="call-1", deadline=T0 + timedelta(hours=1), action="deny", note="no decision within 1h"
        ),
        ToolWaiting(call_id="call-1", tool="send", attempt=1, wake_at=T0 + timedelta(hours=2), reason="busy"),
        ToolWoke(call_id="call-1"),
        ToolDenied(call_id="call-2", tool="lookup", reason="policy"),
        ToolStarted(call_id="call-1", tool="transfer", idempotency_key="k" * 64, attempt=2),
        ToolOutcomeUnknown(call_id="call-1", tool="transfer"),
        ToolReconciled(call_id="call-1", output=None, retry=True, by="ops"),
        ToolCompleted(call_id="call-1", tool="transfer", output="done", is_error=True, duration_ms=42),
        HandedOff(call_id="call-1", agent="billing", to_run_id="run-child"),
        AttemptTraced(trace_id="a" * 32, span_id="b" * 16),
        RunTakenOver(owner="host:2:beef.0", orphaned_ms=57_000, previous_owner="host:1:cafe.0", interrupted_seq=4),
        AgentReplaced(
            version="v2",
            previous_version="v1",
            fingerprint=(("model", "m"), ("tool:pay:effect", "write")),
            changes=("tool pay: schema changed",),
            voided=("call-1",),
        ),
        FinishRejected(step=2, reason="not JSON"),
        BudgetExceeded(reason="usd", spent=1.5, limit=1.0),
        RunFailed(error="boom", kind="MaxIterations"),
        RunQueued(agent="banker", input="pay bob", thread_id="thread-a", principal="ann", request={"input": "d" * 64}),
        RunCancelled(reason="user"),
        RunCompleted(output="paid", structured={"ok": True, "ids": [1, 2]}),
    ]


def make_events(
    run_id: str, payloads: Sequence[EventData], *, start: int = 0, at: datetime = T0, step: timedelta | None = None
) -> list[Event]:
    """Events at consecutive seqs from `start`, one `step` apart in time (default 1 ms)."""
    gap = step if step is not None else timedelta(milliseconds=1)
    return [Event.of(run_id, start + i, at + gap * (start + i), p) for i, p in enumerate(payloads)]


def started(agent: str = "agent", thread_id: str | None = None) -> RunStarted:
    return RunStarted(agent=agent, input="hi", messages=(Message.user("hi", id="u0"),), thread_id=thread_id)


def attempt(step: int, request_id: str = "req") -> ModelAttemptStarted:
    return ModelAttemptStarted(step=step, request_id=request_id, request_digest="")


class Samples:
    """The helpers above, handed to tests as the `samples` fixture.

    (Test modules here are not a package, so `from conftest import …` would be ambiguous.)
    """

    T0 = T0
    every_payload = staticmethod(every_payload)
    make_events = staticmethod(make_events)
    started = staticmethod(started)
    attempt = staticmethod(attempt)


@pytest.fixture
def samples() -> type[Samples]:
    return Samples
