"""What the inspector's browser tests share: a server with the inspector's test agents, a page
signed in with a key, and a run started over the API."""

from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
from _server_support import KEYS, OPERATOR, Server
from playwright.sync_api import Browser, Page

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.sqlite import SqliteStore

EXTRA_AGENTS = ("family", "refunder", "twins", "broken", "ponderer")


def inspector_server(db: Path, env: dict[str, str] | None = None, **kwargs: Any) -> Server:
    extra = tuple(arg for name in EXTRA_AGENTS for arg in ("--agent", f"_inspector_agents:{name}"))
    return Server(db, env={"EUDAIMON_API_KEYS": KEYS, **(env or {})}, args=extra, **kwargs)


def open_page(browser: Browser, server: Server, key: str, path: str = "/") -> Page:
    """A page of its own browser context, signed in with `key`."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.goto(server.url + "/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Use").click()
    page.get_by_test_id("whoami").filter(has_text="·").wait_for()
    if path != "/":
        page.goto(server.url + path)
    return page


def start_run(server: Server, agent: str, text: str, *, wait: bool = False, key: str = OPERATOR) -> dict[str, Any]:
    """A run on a thread of its own; the API's answer."""
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        body = {"input": text, "thread_id": f"browser-{uuid.uuid4().hex[:8]}"}
        answer = client.post(f"/v1/agents/{agent}/runs", params={"wait": wait}, json=body)
        assert answer.status_code in (200, 202), answer.text
        return dict(answer.json())


DOCS = Path(__file__).resolve().parents[3] / "docs" / "images" / "inspector"


def docs_shot(page: Page, name: str, locator: str | None = None) -> None:
    """A screenshot for the docs (`docs/images/inspector/NAME.png`) when
    `EUDAIMON_DOCS_SCREENSHOTS=1`: they are committed, not rewritten on every run."""
    if os.environ.get("EUDAIMON_DOCS_SCREENSHOTS") == "1":
        (page.locator(locator) if locator else page).screenshot(path=str(DOCS / f"{name}.png"))


def replayed_runs(server: Server) -> tuple[str, str]:
    """A support run (v1, "Be fair.": refunds 5) and its replay by v2 ("Be generous.": would
    refund 10, so it diverges at step 2), written into the server's journal: (original, replay)."""
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        return pool.submit(asyncio.run, _replayed(server)).result()


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
