"""`/docs` (Swagger UI) works with no network but the server's own, under the inspector's CSP.

Real Chromium through Playwright against a real `eudaimon serve`; every request to anything
but 127.0.0.1 is aborted (and recorded), and the page must still render every operation of
`/openapi.json` with no Content-Security-Policy violation.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx2
from _server_support import Server
from playwright.sync_api import Browser, Route, expect

from eudaimon.server.pages import CSP


def test_docs_render_offline_under_the_inspectors_csp(server: Server, browser: Browser) -> None:
    """Invariant: `/docs` loads and renders every operation with the network to anything but
    127.0.0.1 blocked; it asks nothing of any other host; its CSP is the inspector's."""
    answer = httpx2.get(server.url + "/docs")
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CSP
    paths = httpx2.get(server.url + "/openapi.json").json()["paths"]
    shown = sum(max(1, len(op.get("tags", []))) for item in paths.values() for op in item.values())  # one per tag
    context = browser.new_context()
    blocked: list[str] = []

    def local_only(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", local_only)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(server.url + "/docs")
    expect(page.locator(".opblock-summary-method")).to_have_count(shown, timeout=20_000)
    expect(page.locator(".info .title")).to_contain_text("eudaimon")
    context.close()
    assert blocked == []
    assert problems == [], problems
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"):
        assert httpx2.get(f"{server.url}/docs/assets/{name}").status_code == 200
    assert httpx2.get(f"{server.url}/docs/assets/..%2Fcore.py").status_code == 404
    assert httpx2.get(f"{server.url}/docs/assets/swagger-ui-bundle.js.map").status_code == 404
