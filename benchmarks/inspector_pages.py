"""How long the inspector's pages take with 10,000 runs stored, and how soon a page shows what changed.

Load: a SQLite journal of 10,000 runs of two agents over 14 days (200 real runs made by
`scripts/inspector_screenshots.py`'s agents, then copies under new run ids: the same mix of
statuses, tokens and durations); a real `eudaimon serve` on it; in headless Chromium each page
loaded in a fresh browser context (nothing cached): the run page until its waterfall and
timeline are drawn, the dashboard until both agents' charts are, the runs list until its first
page of rows is; and the API call each page waits for. Liveness: a run waits for approval with
its page open, `eudaimon runs approve` (another process, the same journal) decides, and the time
until the page shows `approval_decided` is taken; the server is killed (SIGKILL) and the time
until the offline banner shows is taken, then it starts again and the time until the banner goes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1
sys.path[:0] = [str(h.REPO / p) for p in ("scripts", "tests/server/inspector", "tests/server")]


async def copy_runs(db: Path, runs: int) -> None:
    """Fill the store up to `runs` runs with copies of the ones it holds."""
    from eudaimon.core.events import Event
    from eudaimon.stores import SqliteStore

    store = SqliteStore(str(db))
    try:
        originals = [s.run_id for s in await store.list_runs(limit=1_000_000)]
        journals = [await store.load(r) for r in originals]
        for n in range(runs - len(originals)):
            events = journals[n % len(journals)]
            copy = f"run_copy_{n:06d}"
            await store.append(copy, 0, [Event(copy, e.seq, e.at, e.type, e.data) for e in events])
    finally:
        await store.close()


def timed_ms(samples: dict[str, list[float]], name: str, action: Callable[[], object]) -> None:
    start = time.perf_counter()
    action()
    samples.setdefault(name, []).append((time.perf_counter() - start) * 1000)


def pages(quick: bool, samples: dict[str, list[float]]) -> None:
    import httpx2
    from _server_support import ARGS, CHROMIUM, OPERATOR, Server
    from inspector_screenshots import fill_store
    from playwright.sync_api import expect, sync_playwright

    from conftest import open_page

    runs, repeat = (1000, 2) if quick else (10_000, 5)
    with h.scratch("inspector-") as scratch:
        db = scratch / "runs.db"
        asyncio.run(fill_store(db))
        asyncio.run(copy_runs(db, runs))
        path = os.pathsep.join([str(h.REPO / "scripts"), os.environ.get("PYTHONPATH", "")])
        server = Server(
            db,
            env={"EUDAIMON_API_KEYS": "op-key-1:alice:operator", "PYTHONPATH": path},
            args=("--agent", "inspector_screenshots:support", "--agent", "inspector_screenshots:billing"),
        ).start()
        run_id = "run_dash_0001"  # one of the 200 real runs (a support run: model, tool, model)
        try:
            auth = {"Authorization": f"Bearer {OPERATOR}"}
            with httpx2.Client(base_url=server.url, headers=auth, timeout=300) as client:
                for _ in range(repeat):
                    for name, url, params in (
                        ("GET /v1/runs/{id}", f"/v1/runs/{run_id}", {}),
                        ("GET /v1/dashboard?days=14", "/v1/dashboard", {"days": 14}),
                        ("GET /v1/runs?limit=50", "/v1/runs", {"limit": 50}),
                    ):
                        timed_ms(
                            samples,
                            f"{runs:,} runs: {name}",
                            lambda u=url, p=params: client.get(u, params=p).raise_for_status(),
                        )
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                expect.set_options(timeout=300_000)
                for _ in range(repeat):
                    page = open_page(browser, server, OPERATOR)
                    page.set_default_timeout(300_000)

                    def run_page(p: Any = page) -> None:
                        p.goto(f"{server.url}/runs/{run_id}")
                        p.locator("[data-testid=waterfall] [data-span]").first.wait_for()
                        p.locator("[data-testid=event]").last.wait_for()

                    def dashboard(p: Any = page) -> None:
                        p.goto(f"{server.url}/dashboard")
                        expect(p.get_by_test_id("dashboard-agent")).to_have_count(2)

                    def runs_list(p: Any = page) -> None:
                        p.goto(f"{server.url}/")
                        expect(p.locator("[data-testid=runs] [data-run]")).to_have_count(50)

                    timed_ms(samples, f"{runs:,} runs: run page (waterfall drawn)", run_page)
                    timed_ms(samples, f"{runs:,} runs: dashboard (charts drawn)", dashboard)
                    timed_ms(samples, f"{runs:,} runs: runs list (rows drawn)", runs_list)
                    page.context.close()
                browser.close()
        finally:
            server.stop()


def liveness(quick: bool, samples: dict[str, list[float]]) -> None:
    from _server_support import ARGS, CHROMIUM, OPERATOR, Server
    from playwright.sync_api import sync_playwright
    from test_run_page_never_lies import _cli_approve

    from conftest import inspector_server, open_page, start_run

    with h.scratch("liveness-") as scratch:
        server = inspector_server(scratch / "runs.db").start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = open_page(browser, server, OPERATOR)
                for i in range(2 if quick else 5):
                    run_id = start_run(server, "payer", f"pay {i} to LAT")["run_id"]
                    page.goto(f"{server.url}/runs/{run_id}")
                    page.get_by_test_id("pending-approval").wait_for()
                    _cli_approve(server.db, run_id, "wire_1", "x")
                    timed_ms(
                        samples,
                        "CLI approval → on the page",
                        lambda: page.locator('[data-testid=event][data-type="approval_decided"]').wait_for(),
                    )
                for _ in range(1 if quick else 3):
                    server.kill()
                    timed_ms(
                        samples, "server killed → offline banner", lambda: page.get_by_test_id("offline").wait_for()
                    )
                    server = Server(server.db, port=server.port, env=server.env, args=server.args, log=server.log)
                    server.start()
                    timed_ms(
                        samples,
                        "server ready → banner gone",
                        lambda: page.get_by_test_id("offline").wait_for(state="hidden"),
                    )
                browser.close()
        finally:
            server.stop()


def measure(quick: bool) -> dict[str, Any]:
    h.requires("playwright", "pytest", "uvicorn", "fastapi")
    samples: dict[str, list[float]] = {}
    pages(quick, samples)
    liveness(quick, samples)
    figures: dict[str, Any] = {}
    for name, values in samples.items():
        figures[f"{name} / median ms"] = h.median(values)
        figures[f"{name} / worst ms"] = max(values)
    return figures
