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
- **JSON only.** A POST must say `Content-Type: application/json` (415 otherwise), even with no
  body (an empty body reads as `{}`). HTML forms and `fetch(…, {mode: "no-cors"})` cannot send
  that type, so no "simple" cross-origin request can act even in a browser that sends no
  `Origin`. POST is the only method that changes something a simple request may use: a browser
  asks first (a CORS preflight) before any DELETE from another origin, so `curl -X DELETE` needs
  no header.

**Front ends on other origins.** A web front end served from elsewhere (an AG-UI client on a
React dev server, a browser A2A client) is let in by naming its origin exactly:
`create_app(allowed_origins=["http://localhost:3000"])` or `eudaimon serve --allowed-origin
http://localhost:3000`. Its requests pass the origin rule, and the server answers CORS for it
(Starlette's `CORSMiddleware`, inside this guard, so the `Host` rule still comes first); every
other origin is still refused and gets no CORS header. Keys and roles apply as to any client.

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

from eudaimon.core.errors import ConfigurationError

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})
SIMPLE_UNSAFE_METHODS = frozenset({"POST"})  # of the methods a form or a no-cors fetch may send
"""`Sec-Fetch-Site` values of a request this server's own page (or the user, typing a URL) made."""
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
CORS_METHODS = ("GET", "POST", "DELETE")
CORS_HEADERS = (
    "Content-Type", "Authorization", "X-API-Key", "Idempotency-Key", "Last-Event-ID", "Accept", "A2A-Version",
    "Mcp-Protocol-Version", "Mcp-Session-Id", "Mcp-Method", "Mcp-Name",
)  # fmt: skip
"""What a front end on an allowed origin may send: JSON bodies, a key, an idempotency key, a
stream cursor (`EventSource` cannot set headers, but a `fetch`-based SSE reader can), the
A2A protocol version (an A2A 1.0 client sends it; without it the SDK reads the request as 0.3),
and the headers of MCP's Streamable HTTP (a browser MCP client sends its protocol version). Its
methods are the API's: DELETE removes a schedule."""


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


def allowed_origins(values: Iterable[str], *, keyed: bool) -> tuple[str, ...]:
    """The origins given, checked and written as a browser writes its `Origin` (lowercase, no
    default port), so that comparing strings is comparing origins.

    Raises:
        ConfigurationError: a value that is not exactly `scheme://host[:port]` (a path, a
            wildcard in a name, `null`, …), or `"*"` on a server without keys.
    """
    if isinstance(values, str):
        values = (values,)
    checked: list[str] = []
    for value in values:
        origin = _origin_form(value)
        if origin == "*" and not keyed:
            raise ConfigurationError(
                "allowed origin '*' on a server without API keys would let any web page the user opens start, "
                "approve and cancel runs here (every keyless request is an operator); name each front end's "
                "origin exactly (e.g. http://localhost:3000), or serve with API keys"
            )
        if origin not in checked:
            checked.append(origin)
    return tuple(checked)


def _origin_form(value: str) -> str:
    """`value` as an origin (`scheme://host[:port]`, normalised), or a ConfigurationError saying what is wrong."""
    text = value.strip()
    shown = text[:100].encode("ascii", "backslashreplace").decode()
    if text == "*":
        return "*"

    def wrong(why: str) -> ConfigurationError:
        return ConfigurationError(
            f"allowed origin {shown!r} {why}; write an origin as scheme://host[:port], e.g. http://localhost:3000"
        )

    scheme, sep, rest = text.lower().partition("://")
    if not sep:
        raise wrong("has no scheme://")
    if scheme not in DEFAULT_PORTS or scheme.startswith("ws"):
        raise wrong(f"has the scheme {scheme!r}: a browser page's origin is http or https")
    if any(mark in rest for mark in "/?#"):
        raise wrong("has a path, query or fragment (or a trailing '/'): an origin ends at the host or port")
    if "@" in rest:
        raise wrong("has user information: an origin is only scheme, host and port")
    if "*" in rest:
        raise wrong("has a wildcard: each origin is named exactly (only '*' alone, with API keys, means any)")
    if rest.startswith("["):
        name, _, after = rest[1:].partition("]")
        if after and not after.startswith(":"):
            raise wrong("has something after its bracketed address other than :port")
        port_text, has_port = after[1:], bool(after)
    elif rest.count(":") > 1:
        raise wrong("has an IPv6 address without brackets: write it as http://[::1]:3000")
    else:
        name, colon, port_text = rest.partition(":")
        has_port = bool(colon)
    if has_port and not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536):
        raise wrong(f"has the port {port_text!r}: a port is a number from 1 to 65535")
    if not name or not all(c.isascii() and (c.isalnum() or c in "-._:") for c in name):
        raise wrong("has no valid host name (write an internationalised name in its xn-- form)")
    port = int(port_text) if has_port else DEFAULT_PORTS[scheme]
    host = f"[{name}]" if ":" in name else name.rstrip(".")
    return f"{scheme}://{host}" + (f":{port}" if port != DEFAULT_PORTS[scheme] else "")


class BrowserGuard:
    """Refuse requests for other host names (421), cross-origin requests that may change
    something (403), and such requests not sent as JSON (415). See the module's rules."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        names = {host_name(name) for name in allowed_hosts if name.strip()}
        self.any_host = "*" in names
        self.allowed_hosts = frozenset(names - {"*"})
        origins = frozenset(allowed_origins)  # as `allowed_origins()` wrote them
        self.any_origin = "*" in origins
        self.allowed_origins = origins - {"*"}

    def lets_in(self, origin: str) -> bool:
        """Whether `origin` is one of the front ends this server was told to answer."""
        if self.any_origin:
            return origin.strip().lower() != "null"
        try:
            return _origin_form(origin) in self.allowed_origins
        except ConfigurationError:
            return False

    def serves(self, name: str) -> bool:
        return self.any_host or name in self.allowed_hosts or is_loopback(name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}
        readable_by = self._readable_by(headers.get("origin"))
        host = headers.get("host")
        if host is not None and not self.serves(host_name(host)) and not _is_probe(scope):
            shown = host_name(host)[:100].encode("ascii", "backslashreplace").decode()
            await _refuse(
                send,
                readable_by,
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
            await _refuse(send, None, 403, refusal)
            return
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if scope["method"] in SIMPLE_UNSAFE_METHODS and media_type != "application/json":
            await _refuse(
                send,
                readable_by,
                415,
                "a request that changes something must be sent as JSON: set `Content-Type: application/json` "
                "(an empty body counts as {})",
            )
            return
        await self.app(scope, _empty_as_object(receive), send)

    def _readable_by(self, origin: str | None) -> str | None:
        """The origin a refusal is shown to: an allowed front end reads why it was refused (the
        CORS middleware inside never sees a request refused here), a stranger gets no header."""
        if origin is None or not self.lets_in(origin):
            return None
        return "*" if self.any_origin else origin

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
        if same_origin(origin, headers.get("host") or f"{server[0]}:{server[1]}") or self.lets_in(origin):
            return None
        shown = origin[:100].encode("ascii", "backslashreplace").decode()
        try:
            hint = f"; if it is your front end, start the server with `--allowed-origin {_origin_form(origin)}`"
        except ConfigurationError:
            hint = ""
        return (
            f"cross-origin request refused: a page on {shown!r} may not change anything on this server; "
            f"only its own pages (or clients that are not browsers) may{hint}"
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


async def _refuse(send: Send, readable_by: str | None, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if readable_by is not None:
        headers += [(b"access-control-allow-origin", readable_by.encode("latin-1")), (b"vary", b"Origin")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def document_json_bodies(app: FastAPI) -> None:
    """Say in `/openapi.json` that every POST takes a JSON body: those that read none still need
    `Content-Type: application/json` (an empty body is `{}`),
    and a generated client or a fuzzer would otherwise send them none and get 415."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            for item in schema.get("paths", {}).values():
                for method, operation in item.items():
                    if method.upper() in SIMPLE_UNSAFE_METHODS and "requestBody" not in operation:
                        operation["requestBody"] = {
                            "required": False,
                            "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}},
                        }
        return app.openapi_schema or build()

    app.openapi = openapi  # type: ignore[method-assign]
