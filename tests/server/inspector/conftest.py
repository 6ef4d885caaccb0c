"""The inspector in a real browser (Debian's chromium, headless, through Playwright) against a
real `eudaimon serve` in a subprocess, with the test agents of `server_agents.py` and
`inspector_agents.py` and an operator and a viewer key.

Screenshots go to `$EUDAIMON_TEST_ARTIFACTS` (CI keeps that folder), by default
`inspector-artifacts/` under pytest's base temporary directory.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _server_support import KEYS, OPERATOR, Server
from playwright.sync_api import Browser, Page

EXTRA_AGENTS = ("family", "refunder", "twins", "broken")


def inspector_server(db: Path, **kwargs: Any) -> Server:
    extra = tuple(arg for name in EXTRA_AGENTS for arg in ("--agent", f"inspector_agents:{name}"))
    return Server(db, env={"EUDAIMON_API_KEYS": KEYS}, args=extra, **kwargs)


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


def start_run(server: Server, agent: str, text: str, *, wait: bool = False, key: str = OPERATOR) -> dict[str, Any]:
    """A run on a thread of its own; the API's answer."""
    with httpx2.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        body = {"input": text, "thread_id": f"browser-{uuid.uuid4().hex[:8]}"}
        answer = client.post(f"/v1/agents/{agent}/runs", params={"wait": wait}, json=body)
        assert answer.status_code in (200, 202), answer.text
        return dict(answer.json())
