"""Browser safety: only this server's own pages may change runs, and only under its own names.

A server without keys treats every request as an operator, so a browser on the same machine is
its weakest client: any page the user opens can send it requests. Three rules, checked here
for every request before any route runs, with or without keys:

- **Host.** A request whose `Host` is not a name this server serves is refused (421). Loopback
  names (`localhost`, `127.0.0.1`, `::1`, …) are always served; others are added with
  `create_app(allowed_hosts=[…])` or `eudaimon serve --allowed-host NAME` (`"*"` serves any,
  for a proxy that checks `Host` itself). This stops DNS rebinding, where a page's own origin
  comes to resolve to 127.0.0.1 and its same-origin script reads and acts on the API. Only
  `GET /health` and `GET /ready` answer under any name (probes address a server by its IP).
- **Origin.** A request that may change something (any method but GET, HEAD, OPTIONS) whose
  `Origin` is not this server's own, or `null`, is refused (403); so is one without `Origin`
  whose `Sec-Fetch-Site` says it came from another origin (`same-site` included: another port
  of the same host is another origin).
- **JSON only.** Such a request must say `Content-Type: application/json` (415 otherwise), even
  with no body (an empty body reads as `{}`). HTML forms and `fetch(…, {mode: "no-cors"})`
  cannot send that type, so no "simple" cross-origin request can act even in a browser that
  sends no `Origin`.

The guard is pure ASGI and sits outside every other layer, so a refused request reaches no
route, no dependency and no store.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
"""`Sec-Fetch-Site` values of a request this server's own page (or the user, typing a URL) made."""
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def host_name(authority: str) -> str:
    """The name in a `Host` value, without its port, brackets or trailing dot, lowercased."""
    value = authority.strip().lower()
    if value.startswith("["):
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def is_loopback(name: str) -> bool:
    """Whether `name` can only mean this machine (a DNS answer cannot make it elsewhere)."""
    name = host_name(name) if name.startswith("[") else name.strip().lower().rstrip(".")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _authority(value: str) -> tuple[str, int | None]:
    """(name, port) of a `Host` value or of an origin's host part; the port None when not given."""
    value = value.strip().lower()
    port_text = ""
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, _, port_text = value.partition(":")
    else:
        name = value
    port = int(port_text) if port_text.isascii() and port_text.isdigit() else None
    return name.rstrip("."), port


def same_origin(origin: str, host: str) -> bool:
    """Whether a page of `origin` (`scheme://name[:port]`) is a page of the server reached as
    `host` (the `Host` header). A `Host` without a port matches the default port of the origin's
    scheme, whichever it is: behind a TLS proxy the page is `https://name` and the server sees
    plain HTTP."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or "/" in rest:
        return False
    origin_name, origin_port = _authority(rest)
    origin_port = origin_port or DEFAULT_PORTS.get(scheme)
    name, port = _authority(host)
    return origin_name == name and origin_port == (port or DEFAULT_PORTS.get(scheme))


class BrowserGuard:
    """Refuse requests for other host names (421), cross-origin requests that may change
    something (403), and such requests not sent as JSON (415). See the module's rules."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        names = {host_name(name) for name in allowed_hosts if name.strip()}
        self.any_host = "*" in names
        self.allowed_hosts = frozenset(names - {"*"})

    def serves(self, name: str) -> bool:
        return self.any_host or name in self.allowed_hosts or is_loopback(name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}
        host = headers.get("host")
        if host is not None and not self.serves(host_name(host)) and not _is_probe(scope):
            shown = host_name(host)[:100].encode("ascii", "backslashreplace").decode()
            await _refuse(
                send,
                421,
                f"this server does not serve the host name {shown!r}; if it is yours, start the server with "
                f"`--allowed-host {shown}` (create_app(..., allowed_hosts=[{shown!r}]))",
            )
            return
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        refusal = self._cross_origin(scope, headers)
        if refusal is not None:
            await _refuse(send, 403, refusal)
            return
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            await _refuse(
                send,
                415,
                "a request that changes something must be sent as JSON: set `Content-Type: application/json` "
                "(an empty body counts as {})",
            )
            return
        await self.app(scope, _empty_as_object(receive), send)

    def _cross_origin(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why the request came from another origin, or None when it is this server's own."""
        origin = headers.get("origin")
        if origin is None:
            fetch_site = headers.get("sec-fetch-site")
            if fetch_site is not None and fetch_site.strip().lower() not in SAME_ORIGIN_FETCH:
                return (
                    f"a {fetch_site[:20]!r} request may not change anything here: only this server's own pages "
                    "(or clients that are not browsers) may"
                )
            return None
        server = scope.get("server") or ("", None)
        if same_origin(origin, headers.get("host") or f"{server[0]}:{server[1]}"):
            return None
        shown = origin[:100].encode("ascii", "backslashreplace").decode()
        return (
            f"cross-origin request refused: a page on {shown!r} may not change anything on this server; "
            "only its own pages (or clients that are not browsers) may"
        )


PROBES = frozenset({"/health", "/ready"})
"""Answered under any `Host`: load balancers and orchestrators probe by address (a pod's IP),
and what they read (up, ready, how many runs are driven) is no secret worth a rebinding."""


def _is_probe(scope: Scope) -> bool:
    path, root = str(scope.get("path", "")), str(scope.get("root_path", "")).rstrip("/")
    own = path[len(root) :] if root and path.startswith(root) else path
    return scope["method"] in ("GET", "HEAD") and own in PROBES


def _empty_as_object(receive: Receive) -> Receive:
    """`receive`, with a body that is empty as a whole read as `{}`."""
    first = True

    async def receiving() -> Message:
        nonlocal first
        message = await receive()
        if first and message["type"] == "http.request":
            first = False
            if not message.get("body") and not message.get("more_body", False):
                return {**message, "body": b"{}"}
        return message

    return receiving


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def document_json_bodies(app: FastAPI) -> None:
    """Say in `/openapi.json` that every operation that changes something takes a JSON body:
    those that read none still need `Content-Type: application/json` (an empty body is `{}`),
    and a generated client or a fuzzer would otherwise send them none and get 415."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            for item in schema.get("paths", {}).values():
                for method, operation in item.items():
                    if method.upper() not in SAFE_METHODS and "requestBody" not in operation:
                        operation["requestBody"] = {
                            "required": False,
                            "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}},
                        }
        return app.openapi_schema or build()

    app.openapi = openapi  # type: ignore[method-assign]
