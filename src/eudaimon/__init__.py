"""eudaimon: AI agents whose every run is durable.

Each model call, tool call, approval and decision is an event appended to a journal; a run's
state is a fold over its events. The same loop serves live runs, crash recovery, human
approval and time travel.
"""

from eudaimon import errors
from eudaimon.agent import Agent
from eudaimon.agent.response import AgentResponse
from eudaimon.core.effects import Effect
from eudaimon.core.events import Event
from eudaimon.core.messages import ContentPart, DocumentPart, ImagePart, Message, Role, TextPart, ToolCall, Usage
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
from eudaimon.tools import Tool, ToolContext, ToolPolicy, ToolSpec, tool

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
    "ModelRetry",
    "OutputRejected",
    "RunFailedError",
    "RunNotFound",
    "errors",
]
