"""The inspector's paths: each one its script routes (`app.js`) answers the same HTML shell,
under the inspector's Content-Security-Policy; a path it does not route is not a page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from fastapi import FastAPI

from eudaimon.server.pages import CSP, router

PAGES = ("/", "/runs/run-1", "/dashboard", "/schedules", "/inbox", "/threads", "/threads/t-1")


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    app = FastAPI()
    app.include_router(router())
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://inspector") as client:
        yield client


@pytest.mark.parametrize("path", PAGES)
async def test_each_routed_path_answers_the_shell_under_the_csp(client: httpx2.AsyncClient, path: str) -> None:
    """Invariant: every page the script draws (runs, a run, dashboard, schedules, inbox, threads,
    a thread) is served at its own URL, so a link, a reload or a bookmark of it works; each is
    the one shell, with the strict CSP."""
    answer = await client.get(path)
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CSP
    assert 'src="/inspector/app.js"' in answer.text and 'data-root=""' in answer.text


async def test_a_path_the_script_does_not_route_is_not_a_page(client: httpx2.AsyncClient) -> None:
    """Invariant: only the routed paths answer the shell; anything else is a 404, not a page."""
    assert (await client.get("/runs")).status_code == 404
    assert (await client.get("/runs/a/b")).status_code == 404
