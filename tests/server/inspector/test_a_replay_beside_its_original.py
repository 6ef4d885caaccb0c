"""A replay's page shows it beside its original, step by step, the first divergence marked."""

from __future__ import annotations

from _inspector_support import replayed_runs
from _server_support import Server
from playwright.sync_api import Page, expect


def test_a_replay_is_shown_beside_its_original_with_the_first_divergence_marked(page: Page, inspector: Server) -> None:
    """Invariant: on a replay's page, `[data-testid=replay-diff]` lists each step with the
    original's decision and the replay's; the step where v2 refunded 10 instead of 5 is the one
    marked, and the page names both versions."""
    original, replay = replayed_runs(inspector)
    page.goto(f"{inspector.url}/runs/{replay}")
    diff = page.get_by_test_id("replay-diff")
    expect(diff).to_be_visible()
    steps = diff.get_by_test_id("replay-step")
    expect(steps).to_have_count(3)
    expect(diff.locator('[data-testid=replay-step][data-step="1"]')).to_have_attribute("data-same", "true")
    marked = diff.locator("[data-testid=replay-step][data-diverged=true]")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("data-step", "2")
    expect(marked.get_by_test_id("first-divergence")).to_be_visible()
    expect(marked).to_contain_text('"amount": 5')
    expect(marked).to_contain_text('"amount": 10')
    expect(diff).to_contain_text(original)
    expect(page.get_by_test_id("version")).to_have_text("v2")
    page.goto(f"{inspector.url}/runs/{original}")
    expect(page.get_by_test_id("version")).to_have_text("v1")
    expect(page.get_by_test_id("replay-diff")).to_be_hidden()
