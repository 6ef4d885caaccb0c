"""`/threads/ID` in a real Chromium reads as the conversation it is: each run, oldest first, with
what was asked and what it came to (its answer, or its error), not only ids and event counts."""

from __future__ import annotations

import uuid

from _server_support import OPERATOR, Server
from playwright.sync_api import Page, expect


def test_each_run_of_a_thread_shows_what_was_asked_and_answered(page: Page, inspector: Server) -> None:
    thread = f"chat-{uuid.uuid4().hex[:8]}"
    with inspector.client(OPERATOR) as client:
        for asked in ("ticks=1", "ticks=2"):
            started = client.post(
                "/v1/agents/ticker/runs", params={"wait": True}, json={"input": asked, "thread_id": thread}
            )
            assert started.status_code == 200 and started.json()["status"] == "completed", started.text
    page.goto(f"{inspector.url}/threads/{thread}")
    rows = page.get_by_test_id("thread-run")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).get_by_test_id("thread-asked")).to_have_text("ticks=1")
    expect(rows.nth(0).get_by_test_id("thread-answered")).to_contain_text("Ticked 1 times")
    expect(rows.nth(1).get_by_test_id("thread-asked")).to_have_text("ticks=2")
    expect(rows.nth(1).get_by_test_id("thread-answered")).to_contain_text("Ticked 2 times")
