"""Tools: typed functions a model may call, compiled once, with the effect class that governs recovery."""

from eudaimon.tools._tool import (
    Tool,
    ToolArgumentsError,
    ToolContext,
    ToolPolicy,
    ToolReturn,
    ToolSuspended,
    as_tool,
    render_result,
    tool,
)

__all__ = [
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "ToolPolicy",
    "ToolReturn",
    "ToolSuspended",
    "as_tool",
    "render_result",
    "tool",
]
