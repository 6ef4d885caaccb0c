"""The inspector's schedules page lists each schedule with its next and last runs (the last one a
link to the run it started), and the webhook deliveries (none here: this server sends none)."""

from __future__ import annotations

import re

import httpx2
from _inspector_support import open_page
from _server_support import OPERATOR, VIEWER, Server, wait_until
from playwright.sync_api import Browser, Page, expect


def test_schedules_page_shows_next_and_last_runs(page: Page, inspector: Server, shot) -> None:
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "every-second", "cron": "* * * * * *"}
        assert client.post("/v1/schedules", json=body).status_code == 201
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "weekdays", "cron": "0 9 * * 1-5"}
        assert client.post("/v1/schedules", json={**body, "timezone": "Europe/Paris"}).status_code == 201

        def fired() -> bool:
            shown = client.get("/v1/schedules").json()["schedules"]
            return any(s["id"] == "every-second" and s["last_run_id"] for s in shown)

        wait_until(fired, "the per-second schedule to fire", tries=400)
        assert client.post("/v1/schedules/every-second/pause", json={"paused": True}).status_code == 200
    page.goto(inspector.url + "/schedules")
    table = page.get_by_test_id("schedules")
    expect(table.locator("[data-schedule]")).to_have_count(2)
    weekdays = table.locator("[data-schedule=weekdays]")
    expect(weekdays).to_contain_text("0 9 * * 1-5")
    expect(weekdays).to_contain_text("Europe/Paris")
    expect(weekdays.get_by_test_id("next-run")).not_to_have_text("—")
    every = table.locator("[data-schedule=every-second]")
    expect(every).to_contain_text("paused")
    expect(every.get_by_test_id("last-run").locator("a")).to_have_attribute(
        "href", re.compile(r"/runs/sched-every-second-\d+$")
    )
    expect(page.get_by_test_id("webhook-deliveries")).to_contain_text("sends no webhooks")
    shot(page, "schedules")
    every.get_by_test_id("last-run").locator("a").click()
    expect(page).to_have_url(re.compile(r".*/runs/sched-every-second-\d+$"))


def test_a_viewer_is_told_schedules_are_for_operators(browser: Browser, inspector: Server) -> None:
    page = open_page(browser, inspector, VIEWER, "/schedules")
    try:
        expect(page.get_by_test_id("schedules")).to_contain_text("operators only")
        expect(page.get_by_test_id("webhook-deliveries")).to_contain_text("operators only")
    finally:
        page.context.close()
