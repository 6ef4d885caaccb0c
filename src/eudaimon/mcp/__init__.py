"""MCP both ways: servers' tools as an agent's tools, and an eudaimon server's agents as MCP tools.

Needs the `mcp` extra: `pip install -e '.[mcp]'`.

- Using: `Agent(tools=[MCPTools(command=[...])])` or `MCPTools(url=...)`; each call carries its
  idempotency key in `_meta[IDEMPOTENCY_META_KEY]`.
- Serving: `eudaimon serve --mcp` or `create_app(..., mcp=True)` answers MCP at `/mcp`, a tool per
  agent, each call a durable run named by that same key when the caller sends one.
"""

from eudaimon._extras import needs
from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.mcp._errors import MCPConnectionError

with needs("mcp", "eudaimon.mcp (MCPTools)"):
    from eudaimon.mcp._tools import IDEMPOTENCY_META_KEY, MCPToolError, MCPTools

__all__ = ["IDEMPOTENCY_META_KEY", "Effect", "MCPConnectionError", "MCPToolError", "MCPTools", "ToolTraits"]


def __dir__() -> list[str]:
    """The public names, not the helpers this module imports."""
    return sorted(__all__)
