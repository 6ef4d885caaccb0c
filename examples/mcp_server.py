"""A small MCP server for `examples/mcp_agent.py`: a notes store with annotated tools.

python examples/mcp_server.py            # stdio (what mcp_agent.py starts)
python examples/mcp_server.py http 8000  # Streamable HTTP at http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes", log_level="WARNING")
NOTES: dict[str, str] = {}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(title: str) -> str:
    """Read a note by title."""
    return NOTES.get(title, f"no note titled {title!r}")


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, destructive_hint=False))
def save_note(title: str, text: str) -> str:
    """Save a note (saving the same note twice changes nothing)."""
    NOTES[title] = text
    return f"saved {title!r}"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_all_notes() -> str:
    """Delete every note."""
    NOTES.clear()
    return "deleted"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
