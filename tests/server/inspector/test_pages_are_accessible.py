"""axe-core (axe-playwright-python) finds no serious or critical violation on the inspector's
pages: the runs list, a run waiting for approval, the dashboard, the threads and the inbox."""

from __future__ import annotations

import pytest
from _inspector_support import start_run
from _server_support import Server
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

SEVERE = {"serious", "critical"}


def _severe(page: Page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v.get("impact") in SEVERE
    ]


@pytest.fixture(scope="module")
def runs(inspector: Server) -> dict[str, str]:
    return {
        "waiting": str(start_run(inspector, "payer", "pay 61 to \u202eEMCA")["run_id"]),
        "done": str(start_run(inspector, "ticker", "ticks=2", wait=True)["run_id"]),
    }


@pytest.mark.parametrize(
    ("name", "path", "ready"),
    [
        ("runs-list", "/", "[data-testid=runs] [data-run]"),
        ("run-awaiting-approval", "/runs/{waiting}", "[data-testid=pending-approval]"),
        ("run-completed", "/runs/{done}", "[data-testid=waterfall] [data-span]"),
        ("dashboard", "/dashboard", "[data-testid=dashboard-agent]"),
        ("threads", "/threads", "[data-testid=threads] a"),
        ("inbox", "/inbox", "[data-testid=inbox] [data-testid=inbox-item]"),
    ],
)
def test_no_serious_or_critical_violation(
    page: Page, inspector: Server, runs: dict[str, str], name: str, path: str, ready: str, shot
) -> None:
    """Invariant: each page, once drawn, passes axe-core at serious and critical impact."""
    page.goto(inspector.url + path.format(**runs))
    expect(page.locator(ready).first).to_be_visible()
    shot(page, name)
    assert _severe(page) == []
