"""axe-core (axe-playwright-python) finds no violation, of any impact (minor and moderate as well
as serious and critical), on every page of the inspector: the runs list, a run waiting for
approval, a completed run with a child, a failed run, the dashboard, the threads, a thread, the
schedules and the inbox. The counts per page are printed (`-s`) for the record."""

from __future__ import annotations

import pytest
from _inspector_support import replayed_runs, start_run
from _server_support import OPERATOR, Server
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

PAGES = [
    ("runs-list", "/", "[data-testid=runs] [data-run]"),
    ("run-awaiting-approval", "/runs/{waiting}", "[data-testid=pending-approval]"),
    ("run-completed", "/runs/{done}", "[data-testid=waterfall] [data-span]"),
    ("run-with-a-child", "/runs/{family}", "[data-testid=run-tree] [data-testid=tree-link]"),
    ("run-failed", "/runs/{broken}", "[data-testid=event][data-type=run_failed]"),
    ("dashboard", "/dashboard", "[data-testid=dashboard-agent]"),
    ("threads", "/threads", "[data-testid=threads] a"),
    ("thread", "/threads/{thread}", "h2"),
    ("schedules", "/schedules", "[data-testid=schedules] [data-schedule]"),
    ("inbox", "/inbox", "[data-testid=inbox] [data-testid=inbox-item]"),
    ("run-with-effects", "/runs/{effects}", "[data-testid=effects] [data-effect]"),
    ("replay", "/runs/{replay}", "[data-testid=replay-diff] [data-testid=replay-step]"),
]


def violations(page: Page) -> list[str]:
    """Every axe-core violation on the page, whatever its impact, one line each."""
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
    ]


@pytest.fixture(scope="module")
def runs(inspector: Server) -> dict[str, str]:
    done = start_run(inspector, "ticker", "ticks=2", wait=True)
    _, replay = replayed_runs(inspector)
    with inspector.client(OPERATOR) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "weekday-mornings", "cron": "0 9 * * 1-5"}
        assert client.post("/v1/schedules", json={**body, "timezone": "Europe/Paris"}).status_code == 201
    return {
        "effects": str(start_run(inspector, "refunder", "refund A-17 and pay ALICE")["run_id"]),
        "replay": replay,
        "waiting": str(start_run(inspector, "payer", "pay 61 to \u202eEMCA")["run_id"]),
        "done": str(done["run_id"]),
        "family": str(start_run(inspector, "family", "pay the invoice to ACME-Corp")["run_id"]),
        "broken": str(start_run(inspector, "broken", "anything", wait=True)["run_id"]),
        "thread": str(done["thread_id"]),
    }


@pytest.mark.parametrize(("name", "path", "ready"), PAGES, ids=[p[0] for p in PAGES])
def test_no_violation_of_any_impact(
    page: Page, inspector: Server, runs: dict[str, str], name: str, path: str, ready: str, shot
) -> None:
    """Invariant: each page, once drawn, passes axe-core with no violation at all."""
    page.goto(inspector.url + path.format(**runs))
    expect(page.locator(ready).first).to_be_visible()
    shot(page, name)
    found = violations(page)
    print(f"axe-core {name}: {len(found)} violation(s)")
    assert found == []
