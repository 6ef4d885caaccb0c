"""`AgentSettings`: everything `Agent(...)` was given, as one value.

`Agent.__init__` keeps its documented keyword signature (what IDEs, docs and
`inspect.signature(Agent)` show) and gathers its arguments into this frozen dataclass, which is
what `build_runtime_config` reads: one object handed down instead of two dozen keywords
forwarded by hand, and a new option is written in two places (the signature and here), not four.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, Literal

from eudaimon.core.settings import ModelSettings
from eudaimon.datasources import Datasource
from eudaimon.extensions.cost import CostModel
from eudaimon.extensions.guardrails import Guardrail
from eudaimon.extensions.hitl import HumanInputHandler
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.extensions.retry import ToolRetryPolicy
from eudaimon.memory import Memory
from eudaimon.models.base import Model
from eudaimon.runtime.loop.config import ApprovalPolicy
from eudaimon.runtime.process.engines import Engine
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool
from eudaimon.tools.toolsets import Toolset

if TYPE_CHECKING:
    from eudaimon.agent._agent import Agent


class _Default(Enum):
    """The type of `DEFAULT_MEMORY`: "not passed" differs from `memory=None` (no memory)."""

    MEMORY = "default memory"


DEFAULT_MEMORY: Final = _Default.MEMORY
"""`Agent(memory=...)` when not passed: a `SlidingWindowMemory(50)`, as in Daimon."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    """The arguments of one `Agent(...)`, unchanged; each is documented on `Agent`.

    Its fields are exactly `Agent.__init__`'s parameters (a test holds them equal), so
    `AgentSettings.of(locals())` at the top of `__init__` gathers them all.
    """

    model: Model | str
    system_prompt: str | Callable[..., Any] | None = None
    prompt_template: PromptTemplate | PromptBuilder | str | None = None
    tools: Sequence[Tool | Toolset | Callable[..., Any]] = ()
    memory: Memory | Literal[_Default.MEMORY] | None = DEFAULT_MEMORY
    hooks: object | Sequence[object] | None = None
    max_iterations: int = 25
    temperature: float | None = None
    max_tokens: int | None = None
    validate_tool_inputs: bool = True
    middleware: object | Sequence[object] = ()
    input_guardrails: Sequence[Guardrail] = ()
    output_guardrails: Sequence[Guardrail] = ()
    cost_model: CostModel | None = None
    max_budget: float | None = None
    max_budget_tokens: int | None = None
    tool_retry_policy: ToolRetryPolicy | None = None
    human_input: HumanInputHandler | None = None
    output_type: Any = None
    """A type, a JSON Schema, or a `NativeOutput` / `ToolOutput` / `PromptedOutput` of one."""
    output_validators: Sequence[Callable[..., Any]] = ()
    max_output_retries: int = 2
    model_settings: ModelSettings | None = None
    deps_type: type[Any] | None = None
    store: EventStore | str | None = None
    name: str = "agent"
    approval_policy: ApprovalPolicy | None = None
    tool_timeout_s: float | None = None
    approval_timeout_s: float | None = None
    on_approval_timeout: str = "deny"
    max_waits: int = 10
    handoffs: Sequence[Agent[Any, Any]] = ()
    engine: Engine | str | None = None
    description: str | None = None
    datasources: Mapping[str, Datasource] | None = None
    version: str = ""
    on_change: Literal["continue", "refuse"] = "continue"

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> AgentSettings:
        """The settings among `arguments` (an `__init__`'s `locals()`: `self` is left out)."""
        return cls(**{f.name: arguments[f.name] for f in fields(cls)})
