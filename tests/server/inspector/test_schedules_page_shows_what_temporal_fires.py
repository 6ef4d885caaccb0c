"""The inspector's schedules page says which schedules Temporal fires, and shows Temporal's own next
and last action times for them (what `eudaimon schedules list` shows, `Schedules.times`); a
Temporal that does not answer is said so on its row, and the rest of the page still draws."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx2
import pytest
from _server_support import OPERATOR, Server, free_port
from playwright.sync_api import Page, expect

from eudaimon.runtime.process.schedules import KIND, Schedule, Schedules, temporal_schedule_id
from eudaimon.stores.records import records_of
from eudaimon.stores.sqlite import SqliteStore
from support.temporal_dev_server import temporal_or_skip

pytest.importorskip("temporalio", reason="the [temporal] extra is not installed: pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def temporal_for_inspector() -> Iterator[str]:
    yield from temporal_or_skip()


@dataclass(frozen=True)
class TemporalTimes:
    next_action: datetime
    last_action: datetime


async def _add_on_temporal(server: Server, target: str) -> TemporalTimes:
    """A Temporal schedule fired once by hand (no worker needed: the action is Temporal's), and a
    record naming a Temporal nobody listens at; Temporal's own times of the first."""
    from temporalio.client import Client

    from eudaimon.temporal import TemporalEngine

    store = SqliteStore(server.db)
    try:
        engine = TemporalEngine(target, task_queue="inspector-q")
        await Schedules(store).add(
            "ticker", "0 9 * * 1-5", "ticks=0", timezone="Europe/Paris", schedule_id="on-temporal", engine=engine.url
        )
        stray = Schedule(
            id="temporal-gone", agent="ticker", cron="0 9 * * *", input="ticks=0", created_at=datetime.now(UTC).isoformat(),
            engine=TemporalEngine(f"127.0.0.1:{free_port()}", task_queue="inspector-q").url,
        )  # fmt: skip
        assert await records_of(store, what="schedules").put_record(KIND, stray.id, stray.to_json(), only_new=True)
        handle = (await Client.connect(target)).get_schedule_handle(temporal_schedule_id("on-temporal"))
        await handle.trigger()
        for _ in range(200):
            described = await handle.describe()
            if described.info.recent_actions:
                return TemporalTimes(
                    described.info.next_action_times[0], described.info.recent_actions[-1].scheduled_at
                )
            await asyncio.sleep(0.1)
        raise AssertionError("Temporal recorded no action for the trigger")
    finally:
        await store.close()


def test_schedules_page_shows_temporals_schedules_and_their_times(
    page: Page, inspector: Server, temporal_for_inspector: str, shot
) -> None:
    """Invariant: a schedule Temporal fires reads "Temporal" (its engine URL as the title), its next
    run is Temporal's next action time and its last action Temporal's; a schedule `serve` fires
    reads "serve" with its cron-reckoned time; a Temporal that does not answer reads so."""
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        times = pool.submit(asyncio.run, _add_on_temporal(inspector, temporal_for_inspector)).result()
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "on-serve", "cron": "0 9 * * 1-5"}
        assert client.post("/v1/schedules", json=body).status_code == 201
        listed = {s["id"]: s for s in client.get("/v1/schedules").json()["schedules"]}
    assert listed["on-temporal"]["times_from"] == "engine"
    assert listed["on-temporal"]["next_run_at"] == times.next_action.isoformat()
    assert listed["on-temporal"]["engine_last_at"] == times.last_action.isoformat()
    assert listed["on-serve"]["times_from"] == "cron" and listed["on-serve"]["engine"] == ""
    assert listed["temporal-gone"]["times_from"] == "unavailable" and listed["temporal-gone"]["engine_error"]

    page.goto(inspector.url + "/schedules")
    table = page.get_by_test_id("schedules")
    local = lambda at: page.evaluate("iso => new Date(iso).toLocaleString()", at.isoformat())  # noqa: E731
    on_temporal = table.locator("[data-schedule=on-temporal]")
    expect(on_temporal.get_by_test_id("fired-by")).to_have_text("Temporal")
    expect(on_temporal.get_by_test_id("fired-by")).to_have_attribute("title", listed["on-temporal"]["engine"])
    expect(on_temporal.get_by_test_id("next-run")).to_have_text(f"{local(times.next_action)} (Temporal)")
    expect(on_temporal.get_by_test_id("last-action")).to_have_text(
        f"Temporal's last action: {local(times.last_action)}"
    )
    on_serve = table.locator("[data-schedule=on-serve]")
    expect(on_serve.get_by_test_id("fired-by")).to_have_text("serve")
    expect(on_serve.get_by_test_id("next-run")).to_have_text(
        local(datetime.fromisoformat(listed["on-serve"]["next_run_at"]))
    )
    expect(on_serve.get_by_test_id("last-action")).to_have_count(0)
    gone = table.locator("[data-schedule=temporal-gone]")
    expect(gone.get_by_test_id("fired-by")).to_have_text("Temporal")
    expect(gone.get_by_test_id("next-run")).to_have_text("Temporal did not answer")
    shot(page, "temporal-schedules")
