"""eudaimon: AI agents whose every run is durable.

Each model call, tool call, approval and decision is an event appended to a journal; a run's
state is a fold over its events. The same loop serves live runs, crash recovery, human
approval and time travel.
"""

from typing import TYPE_CHECKING

from eudaimon._lazy import lazy

# Every public name, written once, as the import mypy reads; `__all__`, `dir()` and the lazy
# lookup are derived from this block (`eudaimon._lazy`). `import eudaimon` loads none of them: a
# name is imported when first asked for (PEP 562). `from eudaimon import errors as errors` is
# the module itself.
if TYPE_CHECKING:
    from eudaimon import errors as errors
    from eudaimon.agent import Agent as Agent
    from eudaimon.agent.settings import ApprovalSettings as ApprovalSettings
    from eudaimon.agent.settings import DurabilitySettings as DurabilitySettings
    from eudaimon.agent.settings import RunLimits as RunLimits
    from eudaimon.core.effects import Effect as Effect
    from eudaimon.core.events import Event as Event
    from eudaimon.core.messages import ContentPart as ContentPart
    from eudaimon.core.messages import DocumentPart as DocumentPart
    from eudaimon.core.messages import ImagePart as ImagePart
    from eudaimon.core.messages import Message as Message
    from eudaimon.core.messages import Role as Role
    from eudaimon.core.messages import TextPart as TextPart
    from eudaimon.core.messages import ThinkingPart as ThinkingPart
    from eudaimon.core.messages import ToolCall as ToolCall
    from eudaimon.core.messages import Usage as Usage
    from eudaimon.core.settings import ModelSettings as ModelSettings
    from eudaimon.core.state import PendingCall as PendingCall
    from eudaimon.core.state import RunState as RunState
    from eudaimon.core.state import Status as Status
    from eudaimon.datasources import Datasource as Datasource
    from eudaimon.errors import BudgetExceeded as BudgetExceeded
    from eudaimon.errors import Cancelled as Cancelled
    from eudaimon.errors import ConcurrencyConflict as ConcurrencyConflict
    from eudaimon.errors import ConfigurationError as ConfigurationError
    from eudaimon.errors import EudaimonError as EudaimonError
    from eudaimon.errors import GuardrailBlocked as GuardrailBlocked
    from eudaimon.errors import InvalidOperation as InvalidOperation
    from eudaimon.errors import LeaseHeld as LeaseHeld
    from eudaimon.errors import MaxIterations as MaxIterations
    from eudaimon.errors import MissingExtra as MissingExtra
    from eudaimon.errors import ModelRetry as ModelRetry
    from eudaimon.errors import OutputRejected as OutputRejected
    from eudaimon.errors import RunFailedError as RunFailedError
    from eudaimon.errors import RunNotFound as RunNotFound
    from eudaimon.extensions.cost import AnthropicCostModel as AnthropicCostModel
    from eudaimon.extensions.cost import CostModel as CostModel
    from eudaimon.extensions.cost import OpenAICostModel as OpenAICostModel
    from eudaimon.extensions.guardrails import InputGuardrail as InputGuardrail
    from eudaimon.extensions.guardrails import OutputGuardrail as OutputGuardrail
    from eudaimon.extensions.hitl import HumanInputHandler as HumanInputHandler
    from eudaimon.extensions.hitl import HumanInputRequest as HumanInputRequest
    from eudaimon.extensions.hooks import AgentHook as AgentHook
    from eudaimon.extensions.hooks import LoopState as LoopState
    from eudaimon.extensions.middleware import Middleware as Middleware
    from eudaimon.extensions.middleware import MiddlewareAction as MiddlewareAction
    from eudaimon.extensions.prompts import PromptBuilder as PromptBuilder
    from eudaimon.extensions.prompts import PromptTemplate as PromptTemplate
    from eudaimon.extensions.retry import ToolRetryPolicy as ToolRetryPolicy
    from eudaimon.memory import ThreadState as ThreadState
    from eudaimon.models.output import NativeOutput as NativeOutput
    from eudaimon.models.output import PromptedOutput as PromptedOutput
    from eudaimon.models.output import ToolOutput as ToolOutput
    from eudaimon.runtime.loop.cancel import CancellationToken as CancellationToken
    from eudaimon.runtime.process.replay import Replay as Replay
    from eudaimon.runtime.process.response import AgentResponse as AgentResponse
    from eudaimon.tools import Tool as Tool
    from eudaimon.tools import ToolContext as ToolContext
    from eudaimon.tools import ToolPolicy as ToolPolicy
    from eudaimon.tools import ToolSpec as ToolSpec
    from eudaimon.tools import tool as tool

if not TYPE_CHECKING:  # mypy reads the imports above, and still flags a misspelt name
    __getattr__, __dir__ = lazy(__name__, __file__)
