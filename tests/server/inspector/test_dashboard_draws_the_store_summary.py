"""The dashboard: per agent and day, runs by status, cost, tokens, p50/p95 duration and error
rate as SVG drawn by the page, from `GET /v1/dashboard`."""

from __future__ import annotations

from _inspector_support import start_run
from _server_support import OPERATOR, Server
from playwright.sync_api import Page, expect


def test_the_dashboard_charts_each_agent_per_day(page: Page, inspector: Server, shot) -> None:
    """Invariant: every agent with runs has its charts; today's bars carry the numbers the API
    gives (runs by status, tokens, p50/p95, error rate), and the page fetched nothing from outside."""
    for n in range(3):
        start_run(inspector, "ticker", f"ticks={n + 1}", wait=True)
    start_run(inspector, "payer", "pay 1 to DASH")
    with inspector.client(OPERATOR) as client:
        days = client.get("/v1/dashboard", params={"days": 14}).json()["days"]
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(inspector.url) else None)
    page.get_by_test_id("nav-dashboard").click()
    expect(page).to_have_url(inspector.url + "/dashboard")
    for row in days:
        card = page.locator(f'[data-testid=dashboard-agent][data-agent="{row["agent"]}"]')
        expect(card).to_be_visible()
        for status, count in row["by_status"].items():
            bar = card.locator(f'[data-testid=chart-runs] rect[data-day="{row["day"]}"][data-series="{status}"]')
            expect(bar).to_have_attribute("data-value", str(count))
        expect(
            card.locator(f'[data-testid=chart-tokens] rect[data-day="{row["day"]}"][data-series="input"]')
        ).to_have_count(1 if row["input_tokens"] else 0)
        for series in ("p50", "p95"):
            value = row[f"{series}_duration_ms"]
            dot = card.locator(f'[data-testid=chart-duration] circle[data-day="{row["day"]}"][data-series="{series}"]')
            if value is None:
                expect(dot).to_have_count(0)
            else:
                expect(dot).to_have_attribute("data-value", str(value))
        expect(card.locator("[data-testid=chart-errors] svg")).to_be_visible()
        expect(card.locator("[data-testid=chart-cost] svg")).to_be_visible()
    ticker = next(r for r in days if r["agent"] == "ticker")
    assert ticker["runs"] >= 3
    shot(page, "dashboard")
    assert outside == []


def test_the_dashboard_filters_by_agent(page: Page, inspector: Server) -> None:
    """Invariant: `?agent=` shows that agent alone, and the URL keeps it."""
    start_run(inspector, "ticker", "ticks=1", wait=True)
    start_run(inspector, "payer", "pay 2 to DASH")
    page.goto(inspector.url + "/dashboard")
    expect(page.locator("[data-testid=dashboard-agent][data-agent=payer]")).to_be_visible()
    page.get_by_test_id("dashboard-agent-filter").fill("ticker")
    page.get_by_test_id("dashboard-agent-filter").press("Enter")
    expect(page.locator("[data-testid=dashboard-agent][data-agent=payer]")).to_have_count(0)
    expect(page.locator("[data-testid=dashboard-agent][data-agent=ticker]")).to_be_visible()
    assert "agent=ticker" in page.url
    page.reload()
    expect(page.locator("[data-testid=dashboard-agent]")).to_have_count(1)
