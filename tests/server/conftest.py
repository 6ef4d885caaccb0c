"""Fixtures: real `eudaimon serve` processes on 127.0.0.1, each on its own SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _queue_support import backend  # noqa: F401  (a SQLite or PostgreSQL journal for a test)
from _server_support import ARGS, CHROMIUM, KEYS, Server
from playwright.sync_api import Browser, Page, sync_playwright


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One keyless server (loopback) for a module's tests; each test uses runs of its own."""
    running = Server(tmp_path_factory.mktemp("server") / "runs.db").start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with an operator key (alice) and a viewer key (victor)."""
    running = Server(tmp_path_factory.mktemp("keyed") / "runs.db", env={"EUDAIMON_API_KEYS": KEYS}).start()
    yield running
    running.stop()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Server]:
    """A server of this test alone (not started): for restarts, kills and other options."""
    made = Server(tmp_path / "runs.db")
    yield made
    made.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium for a module's browser tests."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (scripts/test.sh does it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page in a browser context of its own (no cookies or storage shared between tests)."""
    context = browser.new_context()
    yield context.new_page()
    context.close()
