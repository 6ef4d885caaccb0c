"""`eudaimon schedules list` at 100 columns: every column was cut to `…` (the id read
`1265d40c…`, the agent `s…`, the state `ac…`), so the id to pause or remove a schedule could not
be read. Ids, cron expressions and run ids are whole; times are the schedule's own, in its zone;
the five-field cron everyone writes is what the help names first."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from cli_support import Invoke

from eudaimon.runtime.process.schedules import Schedules
from eudaimon.stores.url import open_store


def test_a_schedule_reads_whole_in_its_own_zone(cli: Invoke, store_url: str) -> None:
    async def keep() -> None:
        store = open_store(store_url)
        try:
            kept = Schedules(store)
            schedule = await kept.add(
                "shop-desk", "0 30 1 * * *", "nightly report", timezone="Europe/Lisbon", schedule_id="nightly-report"
            )
            slot = datetime(2026, 7, 1, 0, 30, tzinfo=UTC)  # 01:30 in Lisbon, summer time
            await kept.fired(schedule, slot, "run_01a24debb10f6da0b731fc8e8f9962d1")
        finally:
            await store.close()

    asyncio.run(keep())
    result = cli("schedules", "list", "--store", store_url, env={"COLUMNS": "100"})

    assert result.exit_code == 0, result.output
    out = result.output
    assert "…" not in out
    for whole in ("nightly-report", "shop-desk", "0 30 1 * * *", "Europe/Lisbon", "active"):
        assert whole in out, whole
    assert "2026-07-01 01:30" in out  # the last slot (00:30 UTC), as Lisbon reckoned it in summer
    assert "run_01a24debb10f6da0b731fc8e8f9962d1" in out.replace("│", "").replace(" ", "").replace("\n", "")
    assert max(len(line) for line in out.splitlines()) <= 100


def test_the_cron_help_names_five_fields_first(cli: Invoke) -> None:
    result = cli("schedules", "add", "--help", env={"COLUMNS": "200"})
    assert "five fields (minute hour day month weekday)" in result.output
