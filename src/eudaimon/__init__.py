"""eudaimon: AI agents whose every run is durable.

Each model call, tool call, approval and decision is an event appended to a journal; a run's
state is a fold over its events. The same loop serves live runs, crash recovery, human
approval and time travel.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eudaimon import errors
    from eudaimon.agent import Agent
    from eudaimon.core.effects import Effect
    from eudaimon.core.events import Event
    from eudaimon.core.messages import (
        ContentPart,
        DocumentPart,
        ImagePart,
        Message,
        Role,
        TextPart,
        ThinkingPart,
        ToolCall,
        Usage,
    )
    from eudaimon.core.settings import ModelSettings
    from eudaimon.core.state import PendingCall, RunState, Status
    from eudaimon.errors import (
        BudgetExceeded,
        Cancelled,
        ConcurrencyConflict,
        ConfigurationError,
        EudaimonError,
        GuardrailBlocked,
        InvalidOperation,
        LeaseHeld,
        MaxIterations,
        MissingExtra,
        ModelRetry,
        OutputRejected,
        RunFailedError,
        RunNotFound,
    )
    from eudaimon.extensions.cost import AnthropicCostModel, CostModel, OpenAICostModel
    from eudaimon.extensions.guardrails import InputGuardrail, OutputGuardrail
    from eudaimon.extensions.hitl import HumanInputHandler, HumanInputRequest
    from eudaimon.extensions.hooks import AgentHook, LoopState
    from eudaimon.extensions.middleware import Middleware, MiddlewareAction
    from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
    from eudaimon.extensions.retry import ToolRetryPolicy
    from eudaimon.memory import ThreadState
    from eudaimon.runtime.cancel import CancellationToken
    from eudaimon.runtime.response import AgentResponse
    from eudaimon.tools import Tool, ToolContext, ToolPolicy, ToolSpec, tool

# Every public name and the module it lives in. `import eudaimon` loads none of them: a name
# is imported when first asked for (PEP 562), so a script that only needs the core, or a
# command that only prints its help, never pays for the agent, pydantic or an SDK.
_HOMES: dict[str, str] = {
    "Agent": "eudaimon.agent",
    "AgentHook": "eudaimon.extensions.hooks",
    "AgentResponse": "eudaimon.runtime.response",
    "AnthropicCostModel": "eudaimon.extensions.cost",
    "BudgetExceeded": "eudaimon.errors",
    "CancellationToken": "eudaimon.runtime.cancel",
    "Cancelled": "eudaimon.errors",
    "ConcurrencyConflict": "eudaimon.errors",
    "ConfigurationError": "eudaimon.errors",
    "ContentPart": "eudaimon.core.messages",
    "CostModel": "eudaimon.extensions.cost",
    "DocumentPart": "eudaimon.core.messages",
    "Effect": "eudaimon.core.effects",
    "errors": "eudaimon.errors",
    "EudaimonError": "eudaimon.errors",
    "Event": "eudaimon.core.events",
    "GuardrailBlocked": "eudaimon.errors",
    "HumanInputHandler": "eudaimon.extensions.hitl",
    "HumanInputRequest": "eudaimon.extensions.hitl",
    "ImagePart": "eudaimon.core.messages",
    "InputGuardrail": "eudaimon.extensions.guardrails",
    "InvalidOperation": "eudaimon.errors",
    "LeaseHeld": "eudaimon.errors",
    "LoopState": "eudaimon.extensions.hooks",
    "MaxIterations": "eudaimon.errors",
    "MissingExtra": "eudaimon.errors",
    "Message": "eudaimon.core.messages",
    "Middleware": "eudaimon.extensions.middleware",
    "MiddlewareAction": "eudaimon.extensions.middleware",
    "ModelRetry": "eudaimon.errors",
    "ModelSettings": "eudaimon.core.settings",
    "OpenAICostModel": "eudaimon.extensions.cost",
    "OutputGuardrail": "eudaimon.extensions.guardrails",
    "OutputRejected": "eudaimon.errors",
    "PendingCall": "eudaimon.core.state",
    "PromptBuilder": "eudaimon.extensions.prompts",
    "PromptTemplate": "eudaimon.extensions.prompts",
    "Role": "eudaimon.core.messages",
    "RunFailedError": "eudaimon.errors",
    "RunNotFound": "eudaimon.errors",
    "RunState": "eudaimon.core.state",
    "Status": "eudaimon.core.state",
    "TextPart": "eudaimon.core.messages",
    "ThinkingPart": "eudaimon.core.messages",
    "ThreadState": "eudaimon.memory",
    "Tool": "eudaimon.tools",
    "tool": "eudaimon.tools",
    "ToolCall": "eudaimon.core.messages",
    "ToolContext": "eudaimon.tools",
    "ToolPolicy": "eudaimon.tools",
    "ToolRetryPolicy": "eudaimon.extensions.retry",
    "ToolSpec": "eudaimon.tools",
    "Usage": "eudaimon.core.messages",
}


if not TYPE_CHECKING:  # mypy reads the imports above, and still flags a misspelt name

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'eudaimon' has no attribute {name!r}")
        import importlib

        module = importlib.import_module(home)
        value = module if name == "errors" else getattr(module, name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    # The public names, loaded or not, and no helper (`TYPE_CHECKING`, `Any`).
    return sorted(__all__)


__all__ = [
    # agent
    "Agent",
    "AgentResponse",
    "CancellationToken",
    "ModelSettings",
    # tools
    "Effect",
    "Tool",
    "ToolContext",
    "ToolPolicy",
    "ToolSpec",
    "tool",
    # extensions
    "AgentHook",
    "AnthropicCostModel",
    "CostModel",
    "HumanInputHandler",
    "HumanInputRequest",
    "InputGuardrail",
    "LoopState",
    "Middleware",
    "MiddlewareAction",
    "OpenAICostModel",
    "OutputGuardrail",
    "PromptBuilder",
    "PromptTemplate",
    "ThreadState",
    "ToolRetryPolicy",
    # messages and state
    "ContentPart",
    "DocumentPart",
    "Event",
    "ImagePart",
    "Message",
    "PendingCall",
    "Role",
    "RunState",
    "Status",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "Usage",
    # errors
    "BudgetExceeded",
    "Cancelled",
    "ConcurrencyConflict",
    "ConfigurationError",
    "EudaimonError",
    "GuardrailBlocked",
    "InvalidOperation",
    "LeaseHeld",
    "MaxIterations",
    "MissingExtra",
    "ModelRetry",
    "OutputRejected",
    "RunFailedError",
    "RunNotFound",
    "errors",
]
