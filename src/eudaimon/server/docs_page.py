"""`/docs`: Swagger UI for this server's `/openapi.json`, from files in installed packages.

FastAPI's default page loads Swagger UI from a CDN with an inline script, so it needs the
internet and no Content-Security-Policy can be strict about it. Here the Swagger UI bundle
comes from the `fastapi-offline` package (a dependency of the `server` extra, which keeps it
current), the page and its start-up script from this package, and the page is served under
the inspector's CSP: nothing is fetched from anywhere but this server.
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, Response

from eudaimon.server.pages import CSP

PAGE = Path(str(files("eudaimon.server") / "swagger"))
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def _bundle() -> Path | None:
    """The directory of Swagger UI's files, or None when `fastapi-offline` is not installed."""
    try:
        return Path(str(files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        return None


def install(app: FastAPI) -> None:
    """Serve `/docs` (the page), `/docs/init.js` and `/docs/assets/NAME` (Swagger UI's files)."""
    bundle = _bundle()
    pages = APIRouter(include_in_schema=False)
    shell = (PAGE / "index.html").read_text(encoding="utf-8")

    @pages.get("/docs")
    async def docs(request: Request) -> Response:
        if bundle is None:
            return PlainTextResponse(
                "/docs needs the fastapi-offline package: pip install -e '.[server]'", status_code=404
            )
        root = html.escape(str(request.scope.get("root_path", "")).rstrip("/"), quote=True)
        return HTMLResponse(shell.replace("__ROOT__", root), headers=HEADERS)

    @pages.get("/docs/init.js")
    async def init() -> Response:
        return FileResponse(PAGE / "init.js", media_type="text/javascript", headers=HEADERS)

    @pages.get("/docs/assets/{name}")
    async def asset(name: str) -> Response:
        if bundle is None or name not in ASSETS:
            return PlainTextResponse("no such file", status_code=404)
        return FileResponse(bundle / name, headers={"X-Content-Type-Options": "nosniff"})

    app.include_router(pages)
