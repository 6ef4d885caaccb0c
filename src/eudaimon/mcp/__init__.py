"""MCP servers' tools as an agent's tools: `Agent(tools=[MCPTools(command=[...])])`.

Needs the `mcp` extra: `pip install 'eudaimon[mcp]'`.
"""

from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.mcp._errors import MCPConnectionError
from eudaimon.mcp._tools import IDEMPOTENCY_META_KEY, MCPToolError, MCPTools

__all__ = ["IDEMPOTENCY_META_KEY", "Effect", "MCPConnectionError", "MCPToolError", "MCPTools", "ToolTraits"]
