"""The MCP endpoint of an eudaimon server: `/mcp`, Streamable HTTP, every served agent a tool.

The session manager is stateless: no MCP session outlives a request, so a client goes on
talking to a server that restarted (or to another server on the same store) without
initialising again, and what a call did is in the journal, not in a session. The server's API
keys apply as on `/v1`: a request without a valid key is answered 401 before the SDK reads it;
a viewer key may list the tools and read runs, an operator key may also call the agents.
Hosts and origins are checked by the server's own guard, as for every route.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from eudaimon.mcp._served import PRINCIPAL, build_server
from eudaimon.server.auth import presented_key
from eudaimon.server.context import ServerContext, principal_of
from eudaimon.server.protocols import Lifespan, register_protocol

PATH = "/mcp"


class _Endpoint:
    """The ASGI endpoint: the key checked, then the SDK's transport of the running manager."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scope[PRINCIPAL] = principal_of(
            self.ctx.auth, presented_key(headers.get("authorization"), headers.get("x-api-key"))
        )
        if self.manager is None:
            raise RuntimeError("the MCP endpoint serves only while its app's lifespan runs")
        await self.manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """One session manager per start of the app (the SDK runs each once)."""
        manager = StreamableHTTPSessionManager(app=build_server(self.ctx), stateless=True)
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None


def install(app: FastAPI, ctx: ServerContext) -> Lifespan:
    """Add `/mcp` to `app`; the returned lifespan runs its session manager."""
    endpoint = _Endpoint(ctx)
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    return endpoint.running


register_protocol("mcp", install)
