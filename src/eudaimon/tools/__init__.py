"""Tools: typed functions a model may call, compiled once, with the effect class that governs recovery."""

from eudaimon.core.messages import ToolSpec
from eudaimon.tools._context import ToolContext, call_with_context, context_parameter
from eudaimon.tools._time import RequireApproval, RetryAfter
from eudaimon.tools._tool import (
    Prepare,
    Tool,
    ToolArgumentsError,
    ToolPolicy,
    ToolReturn,
    ToolSuspended,
    as_tool,
    render_output,
    render_result,
    tool,
)

__all__ = [
    "Prepare",
    "RequireApproval",
    "RetryAfter",
    "Tool",
    "ToolArgumentsError",
    "ToolContext",
    "ToolPolicy",
    "ToolReturn",
    "ToolSuspended",
    "ToolSpec",
    "as_tool",
    "call_with_context",
    "context_parameter",
    "render_output",
    "render_result",
    "tool",
]
