"""The A2A endpoints of an eudaimon server: per served agent, its card and its JSON-RPC endpoint.

`GET /a2a/{agent}/.well-known/agent-card.json` is the card (public, as A2A discovery expects;
it names the credentials the server requires). `POST /a2a/{agent}` is the SDK's JSON-RPC
dispatcher over `JournalRequestHandler`. The server's API keys apply: a request without a
valid key is answered 401 before the dispatcher reads it; a viewer key may read and subscribe,
an operator key may also send and cancel (403 otherwise).
"""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from eudaimon.a2a._card import agent_card
from eudaimon.a2a._handler import PRINCIPAL, JournalRequestHandler
from eudaimon.agent import Agent
from eudaimon.server.auth import presented_key
from eudaimon.server.context import ServerContext, principal_of
from eudaimon.server.protocols import register_protocol

PREFIX = "/a2a"


def agent_path(name: str) -> str:
    """Where an agent's A2A endpoint is, under the server's root."""
    return f"{PREFIX}/{name}"


class _WithPrincipal(DefaultServerCallContextBuilder):
    """The SDK's call context, carrying the principal the request's key named."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[PRINCIPAL] = request.scope[PRINCIPAL]
        return context


def install(app: FastAPI, ctx: ServerContext) -> None:
    """Add every served agent's A2A card and endpoint to `app`."""
    for name, agent in ctx.agents.items():
        _install_agent(app, ctx, name, agent)


def _install_agent(app: FastAPI, ctx: ServerContext, name: str, agent: Agent[Any, Any]) -> None:
    dispatcher = JsonRpcDispatcher(JournalRequestHandler(ctx, agent), context_builder=_WithPrincipal())
    path = agent_path(name)

    async def rpc(request: Request) -> Response:
        headers = request.headers
        request.scope[PRINCIPAL] = principal_of(
            ctx.auth, presented_key(headers.get("authorization"), headers.get("x-api-key"))
        )
        return await dispatcher.handle_requests(request)

    async def card(request: Request) -> Response:
        root = str(request.base_url).rstrip("/")
        served = agent_card(agent, root + path, keys_required=ctx.auth is not None)
        return JSONResponse(agent_card_to_dict(served))

    app.add_route(path, rpc, methods=["POST"], include_in_schema=False)
    app.add_route(path + AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"], include_in_schema=False)


register_protocol("a2a", install)
