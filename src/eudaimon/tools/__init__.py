"""Tools: typed functions a model may call, compiled once, with the effect class that governs recovery.

What a tool's author uses; the machinery that calls user code with its context is
`eudaimon.tools.context` (`call_with_context`), and the rest stays in the private modules."""

from eudaimon.core.messages import ToolSpec
from eudaimon.tools._time import RequireApproval, RetryAfter
from eudaimon.tools._tool import (
    Prepare,
    Tool,
    ToolArgumentsError,
    ToolPolicy,
    ToolReturn,
    ToolSuspended,
    as_tool,
    tool,
)
from eudaimon.tools.context import ToolContext

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
    "tool",
]
