"""What can go wrong reaching an MCP server."""

from __future__ import annotations

from eudaimon.core.errors import EudaimonError


class MCPConnectionError(EudaimonError):
    """An MCP server could not be started or reached (raised before a run starts), or
    dropped the connection. The message names the server and says what to check."""

    def __init__(self, server: str, detail: str) -> None:
        super().__init__(f"MCP server {server} could not be reached: {detail}")
        self.server = server
        self.detail = detail


class MCPConnectionLost(EudaimonError):
    """The connection failed while a request was in flight: whether the server acted is unknown.
    Raised inside `MCPTools`, which turns it into the call's error result or a reconciliation
    wait (a tool that is not safe to send twice); user code sees it only when calling a
    connection directly."""
