"""MCP servers' tools as an agent's tools: `Agent(tools=[MCPTools(command=[...])])`.

Needs the `mcp` extra: `pip install -e '.[mcp]'`.
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
