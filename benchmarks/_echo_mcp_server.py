"""A one-tool MCP server (stdio) for `delegation.py`: `echo(i)` returns `i`."""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("echo", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(i: int) -> int:
    """Return `i`."""
    return i


if __name__ == "__main__":
    server.run("stdio")
