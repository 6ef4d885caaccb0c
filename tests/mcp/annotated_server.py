"""An MCP server built with the SDK for the tests: annotated tools that log what they execute.

Run it as `python annotated_server.py stdio` or `python annotated_server.py http PORT`.
Every executed call appends one JSON line to `$CALL_LOG` (when set), so a test counts
executions in the world rather than trusting the client. `$SERVER_VARIANT=v2` is the same
server after an upgrade: `append_note` is gone and `lookup` lost its read-only hint.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

VARIANT = os.environ.get("SERVER_VARIANT", "v1")
server = MCPServer("annotated", log_level="WARNING")


def _log(tool: str, ctx: Context, **fields: Any) -> None:
    meta = ctx.request_context.meta or {}
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    fields["authorization"] = headers.get("authorization") if headers is not None else None
    path = os.environ.get("CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "meta": dict(meta), "pid": os.getpid(), **fields}) + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=VARIANT == "v1"))
def lookup(key: str, ctx: Context) -> str:
    """Read a value by key."""
    _log("lookup", ctx, key=key)
    return f"value of {key}"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, destructive_hint=False))
def set_value(key: str, value: str, ctx: Context) -> str:
    """Set a key to a value; setting it twice changes nothing more."""
    _log("set_value", ctx, key=key, value=value)
    return f"{key}={value}"


if VARIANT == "v1":

    @server.tool()
    def append_note(text: str, ctx: Context) -> str:
        """Append a note (no annotations: a plain write)."""
        _log("append_note", ctx, text=text)
        return f"noted: {text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_all(ctx: Context) -> str:
    """Delete everything."""
    _log("delete_all", ctx)
    return "deleted"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def fail(ctx: Context) -> str:
    """Always fails."""
    raise ValueError("the tool failed on purpose")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def exit_server(ctx: Context) -> str:
    """Kill the server process mid-call: the client never hears back."""
    _log("exit_server", ctx)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pid(ctx: Context) -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def slow_write(text: str, seconds: float, ctx: Context) -> str:
    """A write that takes a while."""
    _log("slow_write", ctx, text=text, phase="begin")
    time.sleep(seconds)
    _log("slow_write", ctx, text=text, phase="end")
    return f"wrote {text}"


def main() -> None:
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        port = int(sys.argv[2])
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
