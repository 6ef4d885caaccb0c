"""Webhook retention: deliveries that are done leave the outbox once old — delivered ones after
`keep_delivered_s`, ones failed for good after the longer `keep_failed_s` — by the deliverer's
own loop; pending ones stay whatever their age. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from eudaimon.errors import ConfigurationError
from eudaimon.server import outbox
from eudaimon.server.outbox import Delivery
from eudaimon.server.webhooks import DAY_S, Deliverer, Webhook, new_secret
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore
from support.stores import fresh_store

CLOSED = "http://127.0.0.1:9/hook"  # nothing is due in these tests: no request is ever sent


@pytest.fixture(params=["sqlite", "postgres"])
async def kept(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    async with fresh_store(request.param, tmp_path, min_size=1, max_size=2) as store:
        yield store


def _delivery(key: str, state: str, age: timedelta, *, attempted: bool = True) -> Delivery:
    at = (datetime.now(UTC) - age).isoformat()
    attempts = [{"at": at, "status": 200 if state == "delivered" else 500, "error": None, "duration_ms": 3}]
    return Delivery(
        id=key,
        event="failed",
        run_id=key.split(".")[0],
        seq=1,
        payload="{}",
        created_at=at if not attempted else (datetime.now(UTC) - age - timedelta(minutes=5)).isoformat(),
        state=state,
        attempts=attempts if attempted else [],
    )


async def _ids(records: RecordStore) -> set[str]:
    return {r.key for r in await records.load_records(outbox.DELIVERY)}


async def test_old_deliveries_that_are_done_are_pruned_by_the_deliverer(kept: EventStore) -> None:
    """Invariant: one deliverer tick removes the delivered delivery older than 7 days and the
    failed one older than 30; it keeps a delivered one of 6 days, a failed one of 10 days, and a
    pending one of 60 days; a second tick soon after removes nothing more."""
    assert isinstance(kept, RecordStore)
    rows = {
        "old-delivered.1": _delivery("old-delivered.1", "delivered", timedelta(days=8)),
        "new-delivered.1": _delivery("new-delivered.1", "delivered", timedelta(days=6)),
        "old-failed.1": _delivery("old-failed.1", "failed", timedelta(days=31)),
        "young-failed.1": _delivery("young-failed.1", "failed", timedelta(days=10)),
        "old-pending.1": _delivery("old-pending.1", "pending", timedelta(days=60), attempted=False),
    }
    for key, delivery in rows.items():
        assert await kept.put_record(outbox.DELIVERY, key, delivery.to_json(), only_new=True)
    deliverer = Deliverer(kept, Webhook(CLOSED, new_secret()))

    assert await deliverer.tick() == 0

    assert await _ids(kept) == {"new-delivered.1", "young-failed.1", "old-pending.1"}
    await kept.put_record(outbox.DELIVERY, "late.1", rows["old-delivered.1"].to_json())
    await deliverer.tick()  # within PRUNE_EVERY_S of the last prune: the outbox is not read again
    assert "late.1" in await _ids(kept)


async def test_retention_ages_are_the_webhooks_setting(kept: EventStore) -> None:
    """Invariant: with `keep_delivered_s` of one hour and `keep_failed_s` of two days, a delivered
    delivery of two hours and a failed one of three days are pruned, a failed one of one day kept;
    `prune` counts each removed once."""
    assert isinstance(kept, RecordStore)
    for delivery in (
        _delivery("d.1", "delivered", timedelta(hours=2)),
        _delivery("f.1", "failed", timedelta(days=3)),
        _delivery("f.2", "failed", timedelta(days=1)),
    ):
        await kept.put_record(outbox.DELIVERY, delivery.id, delivery.to_json())
    hook = Webhook(CLOSED, new_secret(), keep_delivered_s=3600, keep_failed_s=2 * DAY_S)

    assert await Deliverer(kept, hook).prune() == 2
    assert await Deliverer(kept, hook).prune() == 0
    assert await _ids(kept) == {"f.2"}


@pytest.mark.parametrize("age", [0, -1.0, float("inf"), float("nan")])
def test_a_retention_age_that_is_not_positive_is_refused(age: float) -> None:
    """Invariant: a retention age of zero, below zero, infinite or NaN is a ConfigurationError naming it."""
    with pytest.raises(ConfigurationError, match="keep_delivered_s must be a positive number"):
        Webhook(CLOSED, new_secret(), keep_delivered_s=age)
