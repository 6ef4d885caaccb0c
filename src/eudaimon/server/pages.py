"""The web inspector's pages: one HTML shell and its static script and styles, from the wheel.

Nothing is built or fetched at run time. The same page serves `/`, `/runs/{id}` and
`/threads…`; its script reads the path. A strict Content-Security-Policy allows only this
origin's script and styles, so text a model or tool wrote can never run as code even if it
reached the page as markup (the script only ever sets it as text).
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = Path(str(files("eudaimon.server") / "inspector"))
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
SHELL_PATHS = ("/", "/runs/{run_id}", "/dashboard", "/schedules", "/inbox", "/threads", "/threads/{thread_id}")
"""The paths the inspector's script routes (`app.js`): each answers the same shell."""


def static_files() -> StaticFiles:
    return StaticFiles(directory=ASSETS)


def router() -> APIRouter:
    pages = APIRouter(include_in_schema=False)
    shell = (ASSETS / "index.html").read_text(encoding="utf-8")

    async def page(request: Request) -> Response:
        # Mounted under a prefix (`app.mount("/eudaimon", …)`), the page's links and API calls
        # must carry it: the shell names it once, and the script prefixes every path with it.
        root = html.escape(str(request.scope.get("root_path", "")).rstrip("/"), quote=True)
        return HTMLResponse(shell.replace("__ROOT__", root), headers=_HEADERS)

    for path in SHELL_PATHS:
        pages.add_api_route(path, page, methods=["GET"])
    return pages
