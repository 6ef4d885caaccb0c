"""How long the inspector's run page and dashboard take to load with 10,000 runs in the store.

Fills a SQLite journal with `--runs` runs (default 10,000) of two agents over 14 days: 200
real runs made by `scripts/inspector_screenshots.py`'s agents (the clock moved back), then
copies of them under new run ids (the same events, so the same mix of statuses, tokens and
durations). Starts a real `eudaimon serve` on it and, in headless Chromium, loads each page
`--repeat` times (a fresh browser context each time, so nothing is cached):

- the run page of a finished run, until its waterfall and timeline are drawn;
- the dashboard, until both agents' charts are drawn;
- the runs list, until its first page of rows is drawn.

Reported: the median and the worst of the loads, and of the API call each page waits for.
The machine may be shared: the numbers are for one run of this script, not for comparison
across machines.

    PYTHONPATH=src python benchmarks/inspector_load.py [--runs 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests" / "server" / "inspector"), str(ROOT / "tests" / "server")]


async def _copy(db: Path, runs: int) -> None:
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


def _timed(samples: list[float], action: object) -> None:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    samples.append((time.perf_counter() - start) * 1000)


RUN_PAGE, DASHBOARD, RUNS_LIST = "run page (waterfall drawn)", "dashboard (charts drawn)", "runs list (rows drawn)"


def _run_page(page: Any, url: str, run_id: str) -> None:
    page.goto(f"{url}/runs/{run_id}")
    page.locator("[data-testid=waterfall] [data-span]").first.wait_for()
    page.locator("[data-testid=event]").last.wait_for()


def _dashboard(page: Any, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/dashboard")
    expect(page.get_by_test_id("dashboard-agent")).to_have_count(2)


def _runs_list(page: Any, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/")
    expect(page.locator("[data-testid=runs] [data-run]")).to_have_count(50)


def _line(name: str, samples: list[float]) -> str:
    return f"{name:<34} median {statistics.median(samples):8.0f} ms   worst {max(samples):8.0f} ms   (n={len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import os

    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "scripts"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    )
    from _server_support import ARGS, CHROMIUM, OPERATOR, Server
    from inspector_screenshots import fill_store
    from playwright.sync_api import expect, sync_playwright

    from conftest import open_page

    db = Path(tempfile.mkdtemp(prefix="inspector-load-")) / "runs.db"
    began = time.perf_counter()
    asyncio.run(fill_store(db))
    asyncio.run(_copy(db, args.runs))
    print(f"store: {args.runs} runs in {db} (filled in {time.perf_counter() - began:.0f} s)")
    server = Server(
        db,
        env={"EUDAIMON_API_KEYS": "op-key-1:alice:operator", "PYTHONPATH": os.environ["PYTHONPATH"]},
        args=("--agent", "inspector_screenshots:support", "--agent", "inspector_screenshots:billing"),
    ).start()
    api: dict[str, list[float]] = {
        "GET /v1/runs/{id}": [],
        "GET /v1/dashboard?days=14": [],
        "GET /v1/runs?limit=50": [],
    }
    pages: dict[str, list[float]] = {
        "run page (waterfall drawn)": [],
        "dashboard (charts drawn)": [],
        "runs list (rows drawn)": [],
    }
    run_id = "run_dash_0001"  # one of the 200 real runs (a support run: model, tool, model)
    try:
        with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=300) as client:
            for _ in range(args.repeat):
                _timed(api["GET /v1/runs/{id}"], lambda: client.get(f"/v1/runs/{run_id}").raise_for_status())
                _timed(
                    api["GET /v1/dashboard?days=14"],
                    lambda: client.get("/v1/dashboard", params={"days": 14}).raise_for_status(),
                )
                _timed(
                    api["GET /v1/runs?limit=50"],
                    lambda: client.get("/v1/runs", params={"limit": 50}).raise_for_status(),
                )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            for _ in range(args.repeat):
                page = open_page(browser, server, OPERATOR)
                page.set_default_timeout(300_000)
                expect.set_options(timeout=300_000)

                _timed(pages[RUN_PAGE], lambda p=page: _run_page(p, server.url, run_id))
                _timed(pages[DASHBOARD], lambda p=page: _dashboard(p, server.url))
                _timed(pages[RUNS_LIST], lambda p=page: _runs_list(p, server.url))
                page.context.close()
            browser.close()
    finally:
        server.stop()
    for name, samples in {**pages, **api}.items():
        print(_line(name, samples))


if __name__ == "__main__":
    main()
