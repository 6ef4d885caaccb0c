"""`eudaimon mcp`: the agents as an MCP server on stdin and stdout, for clients that start
their servers as processes (desktop assistants, IDEs).

The process is a whole eudaimon server without HTTP: the app `create_app` built runs its
lifespan (recovery of runs a crash left, deadlines, durable waits, schedules), so a call that
waits for approval goes on here once an operator decides elsewhere, and a run this process
left running when its client killed it is taken over by the next one. The caller is the user
who started the process: an operator, journaled by login name, as the CLI's decisions are.
"""

from __future__ import annotations

from fastapi import FastAPI
from mcp.server.stdio import stdio_server

from eudaimon.mcp._served import build_server
from eudaimon.server.auth import Principal, Role
from eudaimon.server.context import ServerContext


async def serve_stdio(app: FastAPI, *, user: str) -> None:
    """Answer MCP on this process's stdin and stdout until the client closes them; every call
    is `user`'s, an operator."""
    ctx: ServerContext = app.state.eudaimon
    server = build_server(ctx, local=Principal(user, Role.OPERATOR))
    async with app.router.lifespan_context(app), stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
