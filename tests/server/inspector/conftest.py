"""The inspector in a real browser (Debian's chromium, headless, through Playwright) against a
real `eudaimon serve` in a subprocess, with the test agents of `_server_agents.py` and
`_inspector_agents.py` and an operator and a viewer key.

Screenshots go to `$EUDAIMON_TEST_ARTIFACTS` (CI keeps that folder), by default
`inspector-artifacts/` under pytest's base temporary directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspector_support import inspector_server, open_page
from _server_support import OPERATOR, Server
from playwright.sync_api import Browser, Page


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("EUDAIMON_TEST_ARTIFACTS") or tmp_path_factory.getbasetemp() / "inspector-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = inspector_server(tmp_path_factory.mktemp("inspector") / "runs.db").start()
    yield running
    running.stop()


@pytest.fixture
def page(browser: Browser, inspector: Server) -> Iterator[Page]:
    opened = open_page(browser, inspector, OPERATOR)
    yield opened
    opened.context.close()


@pytest.fixture
def shot(artifacts: Path, request: pytest.FixtureRequest) -> Any:
    def take(page: Page, name: str) -> Path:
        path = artifacts / f"{request.node.name}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
