"""The inspector's screenshots in docs/images/inspector/, made from real runs in a real server.

    PYTHONPATH=src python scripts/inspector_screenshots.py [--out docs/images/inspector]

- `waterfall.png`: a run with a retry, a child run and an approval, approved and completed;
- `approval-bidi.png`: a wire whose payee holds U+202E (it would read ACME), shown and flagged;
- `offline.png`: a run page after its server was killed;
- `dashboard.png`: the dashboard after 200 runs of two agents over 14 days (made in this process
  with the clock moved back, then served).

The test agents come from tests/server (`_server_agents`, `_inspector_agents`); the dashboard's
two agents are defined here, so the server started for them imports this module.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.errors import ModelError, RunFailedError
from eudaimon.core.messages import Role, Usage
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.models.base import ChatResponse, StopReason

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "server"
CHROMIUM = os.environ.get("EUDAIMON_TEST_CHROMIUM", "/usr/bin/chromium")


class FlatPrices:
    """$1 per million input tokens, $4 per million output tokens."""

    def cost_per_token(self, model_id: str, direction: object) -> float | None:
        return 4e-6 if str(direction).lower().endswith("output") else 1e-6


@tool(effect="read")
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


@tool(effect="irreversible")
def charge(amount_usd: float) -> str:
    """Charge the customer."""
    return f"charged ${amount_usd:.2f}"


def _answer(request: ChatRequest, tool_name: str, arguments: dict[str, object]) -> ChatResponse:
    user = next(m for m in reversed(request.messages) if m.role is Role.USER).content
    if "fail" in user:
        raise ModelError("400 from the provider: the request was refused")
    used = sum(len(m.content) for m in request.messages)
    usage = Usage(input_tokens=200 + used * 3, output_tokens=40 + len(user) * 2)
    if not any(m.role is Role.TOOL for m in request.messages):
        return ChatResponse(
            Message.assistant(tool_calls=[ToolCall("call_1", tool_name, arguments)]), StopReason.TOOL_USE, usage
        )
    return ChatResponse(Message.assistant("Done."), StopReason.END_TURN, usage)


support = Agent(
    FunctionModel(lambda r: _answer(r, "lookup", {"order": "A-1"}), "support-model"),
    tools=[lookup], name="support", memory=None, cost_model=FlatPrices(),
)  # fmt: skip
billing = Agent(
    FunctionModel(lambda r: _answer(r, "charge", {"amount_usd": 20.0}), "billing-model"),
    tools=[charge], name="billing", memory=None, cost_model=FlatPrices(),
)  # fmt: skip


async def fill_store(db: Path, count: int = 200, days: int = 14) -> None:
    """`count` runs of the two agents spread over `days` days, with a clock moved back so each
    run's events carry the times of its day (and durations of a few hundred ms to seconds)."""
    from eudaimon.runtime.loop import clock
    from eudaimon.runtime.process import operations
    from eudaimon.runtime.process.load_state import load_state
    from eudaimon.stores import SqliteStore

    store = SqliteStore(str(db))
    pick = random.Random(7)
    today = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0)
    served = {
        a.name: Agent(
            a.model, tools=list(a.tools.values()), name=a.name, memory=None, store=store, cost_model=FlatPrices()
        )
        for a in (support, billing)
    }
    system = clock.SYSTEM_CLOCK  # every journal of this process stamps its events with its `now`
    real_now = system.now
    try:
        for n in range(count):
            day = today - timedelta(days=pick.randrange(days))
            moment = itertools.count()
            step_ms = pick.choice([40, 80, 150, 300, 700])
            object.__setattr__(
                system,
                "now",
                lambda day=day, moment=moment, step_ms=step_ms, n=n: (
                    day + timedelta(minutes=n, milliseconds=next(moment) * step_ms)
                ),
            )
            agent = served["support" if n % 5 < 3 else "billing"]
            text = "fail" if pick.random() < 0.08 else f"order {n}"
            latest = f"run_dash_{n:04d}"
            with contextlib.suppress(RunFailedError):  # the failed runs the dashboard counts
                await agent.prompt(text, run_id=latest)
            if agent.name == "billing":
                state = await load_state(store, latest)
                if state.awaiting_approval() and pick.random() < 0.9:
                    approved = pick.random() < 0.85
                    await operations.approve(store, latest, "call_1", approved, by="finance")
                    await agent.resume(latest)
    finally:
        object.__setattr__(system, "now", real_now)
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "inspector")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path[:0] = [str(TESTS / "inspector"), str(TESTS)]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "scripts"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    )
    from _server_support import OPERATOR, Server, wait_until
    from playwright.sync_api import expect, sync_playwright

    from conftest import inspector_server, open_page, start_run

    work = Path(tempfile.mkdtemp(prefix="inspector-shots-"))
    asyncio.run(fill_store(work / "dashboard.db"))  # before Playwright's loop starts on this thread
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        server = inspector_server(work / "runs.db").start()
        try:
            run_id = str(start_run(server, "family", "pay the invoice to ACME-Corp")["run_id"])
            with server.client(OPERATOR) as client:
                wait_until(
                    lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval", "the approval"
                )
            page = open_page(browser, server, OPERATOR, f"/runs/{run_id}")
            page.get_by_test_id("approve").click()
            expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
            page.locator("main > section").first.screenshot(path=str(args.out / "waterfall.png"))
            bidi = str(start_run(server, "payer", "pay 250 to \u202eEMCA")["run_id"])
            page.goto(f"{server.url}/runs/{bidi}")
            expect(page.get_by_test_id("hidden-chars-warning")).to_be_visible()
            page.get_by_test_id("pending-approval").screenshot(path=str(args.out / "approval-bidi.png"))
            server.kill()
            expect(page.get_by_test_id("offline")).to_be_visible()
            page.screenshot(path=str(args.out / "offline.png"))
            page.context.close()
        finally:
            server.stop()

        dashboard = Server(
            work / "dashboard.db",
            env={"EUDAIMON_API_KEYS": "op-key-1:alice:operator", "PYTHONPATH": os.environ["PYTHONPATH"]},
            args=("--agent", "inspector_screenshots:support", "--agent", "inspector_screenshots:billing"),
        ).start()
        try:
            page = open_page(browser, dashboard, OPERATOR, "/dashboard?agent=")
            expect(page.get_by_test_id("dashboard-agent")).to_have_count(2)
            page.screenshot(path=str(args.out / "dashboard.png"), full_page=True)
            page.context.close()
        finally:
            dashboard.stop()
        browser.close()
    print(f"screenshots in {args.out}")


if __name__ == "__main__":
    main()
