"""Webhooks announce what happens from the first scan of a store on, never its history: a run
journaled before webhooks began on the store, and updated after (resumed a week later, or
within the scan's margin of its first scan), announces its new events only. On SQLite and
PostgreSQL, through the outbox's own scan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from eudaimon.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    EventData,
    ModelCalled,
    RunCompleted,
    RunStarted,
    ToolStarted,
    ToolWaiting,
)
from eudaimon.core.messages import Message, ToolCall
from eudaimon.core.run_index import STATUS_OF_TYPE
from eudaimon.server import outbox
from eudaimon.server.webhook_events import DEFAULT_EVENTS, EVENT_NAMES
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore
from support.stores import fresh_store

EVERY_EVENT = frozenset(EVENT_NAMES)


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    async with fresh_store(request.param, tmp_path, min_size=1, max_size=2) as opened:
        yield opened


async def _journal(store: EventStore, run_id: str, first_seq: int, at: datetime, data: list[EventData]) -> None:
    await store.append(run_id, first_seq, [Event.of(run_id, first_seq + i, at, e) for i, e in enumerate(data)])


def _waiting() -> list[EventData]:
    call = ToolCall("c1", "send_wire", {"amount": 5})
    return [
        RunStarted(agent="bank", input="pay", messages=(Message.user("pay"),)),
        ModelCalled(step=1, request_id="r", message=Message.assistant("", tool_calls=[call])),
        ApprovalRequested(call_id="c1", tool="send_wire"),
    ]


async def _announced(store: EventStore) -> list[tuple[str, str]]:
    assert isinstance(store, RecordStore)
    return sorted((d.run_id, d.event) for d in await outbox.deliveries(store, 100))


@pytest.mark.parametrize("journaled_ago", [timedelta(days=7), timedelta(seconds=20)], ids=["a-week", "in-the-margin"])
async def test_a_run_from_before_webhooks_announces_only_its_new_events(
    store: EventStore, journaled_ago: timedelta
) -> None:
    """Invariant: the approval a run asked for before the store's first scan is not announced
    when the run is decided after it; the decision's consequences are (a run that starts after
    the first scan is announced whole)."""
    assert isinstance(store, RecordStore)
    await _journal(store, "old", 0, datetime.now(UTC) - journaled_ago, _waiting())
    assert await outbox.scan(store, store, EVERY_EVENT) == 0  # the first scan: webhooks begin now
    decided: list[EventData] = [
        ApprovalDecided(call_id="c1", approved=False, by="ops"),
        RunCompleted(output="not paid"),
    ]
    await _journal(store, "old", 3, datetime.now(UTC), decided)
    await _journal(store, "new", 0, datetime.now(UTC), _waiting())

    await outbox.scan(store, store, EVERY_EVENT)

    assert await _announced(store) == [("new", "awaiting_approval"), ("old", "completed")]


def test_every_event_a_scan_names_is_one_a_receiver_can_choose() -> None:
    """Invariant: the names `serve --webhook-events` lists (kept apart so the CLI need not import
    the server) are the names the outbox gives events, each given to some event (`waiting` was
    listed and documented, and never sent), and the default is among them."""
    named = set(outbox.NAME_OF_TYPE.values()) | set(STATUS_OF_TYPE.values())
    assert named == set(EVENT_NAMES) and len(EVENT_NAMES) == len(set(EVENT_NAMES))
    assert set(EVENT_NAMES) >= DEFAULT_EVENTS


async def test_a_call_that_waits_is_announced_as_waiting(store: EventStore) -> None:
    """Invariant: a tool that asks to run again later (`tool_waiting`) is the `waiting` event."""
    assert isinstance(store, RecordStore)
    assert await outbox.scan(store, store, EVERY_EVENT) == 0
    started = ToolStarted(call_id="c1", tool="send_wire", idempotency_key="k" * 64, attempt=1)
    wake = datetime.now(UTC) + timedelta(hours=1)
    later: list[EventData] = [started, ToolWaiting(call_id="c1", tool="send_wire", attempt=1, wake_at=wake)]
    await _journal(store, "slow", 0, datetime.now(UTC), [*_waiting()[:2], *later])

    await outbox.scan(store, store, EVERY_EVENT)

    assert await _announced(store) == [("slow", "waiting")]
