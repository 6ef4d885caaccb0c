"""A replay's page shows it beside its original, step by step, the first divergence marked."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _server_support import Server
from playwright.sync_api import Page, expect

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.sqlite import SqliteStore


def _support(store: SqliteStore, prompt: str, version: str, ledger: list[int]) -> Agent[Any, Any]:
    @tool(effect="read")
    def lookup(order: int) -> str:
        """Look an order up."""
        return f"order {order}: paid"

    @tool(effect="write")
    def refund(order: int, amount: int) -> str:
        """Refund an order."""
        ledger.append(amount)
        return f"refunded {amount}"

    def answer(request: ChatRequest) -> Message | str:
        told = [m for m in request.messages if m.role == "tool"]
        if not told:
            return Message.assistant(tool_calls=[ToolCall("l1", "lookup", {"order": 42})])
        if len(told) == 1:
            amount = 10 if "generous" in str(request.messages[0].content) else 5
            return Message.assistant(tool_calls=[ToolCall("r1", "refund", {"order": 42, "amount": amount})])
        return "refunded order 42"

    return Agent(
        FunctionModel(answer),
        system_prompt=prompt,
        tools=[lookup, refund],
        store=store,
        name="replayed-support",
        version=version,
        memory=None,
    )


async def _replayed(server: Server) -> tuple[str, str]:
    store, ledger = SqliteStore(server.db), []
    try:
        original = await _support(store, "Be fair.", "v1", ledger).prompt("refund order 42")
        replay = await _support(store, "Be generous.", "v2", ledger).replay(original.run_id)
        assert replay.status == "diverged" and ledger == [5]
        return original.run_id, replay.run_id
    finally:
        await store.close()


def test_a_replay_is_shown_beside_its_original_with_the_first_divergence_marked(page: Page, inspector: Server) -> None:
    """Invariant: on a replay's page, `[data-testid=replay-diff]` lists each step with the
    original's decision and the replay's; the step where v2 refunded 10 instead of 5 is the one
    marked, and the page names both versions."""
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        original, replay = pool.submit(asyncio.run, _replayed(inspector)).result()
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
