"""What the runtime needs from an agent, resolved once when the Agent is built."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eudaimon.core.decide import DecideConfig
from eudaimon.core.messages import ToolCall, Usage
from eudaimon.core.settings import NO_SETTINGS, ModelSettings
from eudaimon.models.base import Model, StructuredOutput, ToolSpec
from eudaimon.tools import RequireApproval, Tool, ToolContext, ToolPolicy

if TYPE_CHECKING:
    from eudaimon.datasources import Datasource
    from eudaimon.extensions.cost import Budget
    from eudaimon.extensions.guardrails import Guardrail
    from eudaimon.extensions.hooks import HookSet
    from eudaimon.extensions.middleware import MiddlewareStack
    from eudaimon.extensions.retry import ToolRetryPolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrySettings:
    """How model calls are retried: `max_retries` after the first try, delays in seconds."""

    max_retries: int = 4
    initial_delay: float = 0.5
    max_delay: float = 30.0
    max_context_retries: int = 3
    """Smaller requests tried in one step after the provider said the context is too long."""

    def delay_for(
        self, retry_number: int, retry_after_s: float | None, jitter: Callable[[], float] = random.random
    ) -> float:
        backoff = min(self.max_delay, self.initial_delay * 2.0 ** (retry_number - 1))
        jittered = backoff * (0.5 + jitter() / 2)
        return max(jittered, min(float(retry_after_s), self.max_delay * 4)) if retry_after_s else jittered


ApprovalPolicy = Callable[
    [ToolCall, Tool], "ToolPolicy | RequireApproval | str | Awaitable[ToolPolicy | RequireApproval | str]"
]
Pricer = Callable[[str, Usage], "float | None"]
OutputValidator = Callable[[str, ToolContext[Any]], Awaitable[tuple[str, Any]]]
"""Checks a final answer: returns the text and structured value to complete with, or raises
ValueError (the schema) or `ModelRetry` (a validator) with a reason the model can act on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeConfig:
    agent: str
    model: Model
    tools: Mapping[str, Tool]
    tool_specs: tuple[ToolSpec, ...]
    decide: DecideConfig
    temperature: float | None = None
    max_tokens: int | None = None
    validate_tool_inputs: bool = True
    hooks: HookSet | None = None
    middleware: MiddlewareStack | None = None
    output_guardrails: Sequence[Guardrail] = ()
    price: Pricer | None = None
    budget: Budget | None = None
    tool_retry_policy: ToolRetryPolicy | None = None
    approval_policy: ApprovalPolicy | None = None
    output_validator: OutputValidator | None = None
    model_retry: RetrySettings = field(default_factory=RetrySettings)
    model_settings: ModelSettings = NO_SETTINGS
    """The agent's settings; a run's own (`prompt(model_settings=…)`) are merged over them."""
    prepared: bool = False
    """Some tool has `prepare`: the specs offered are decided, and journaled, per step."""
    tool_timeout_s: float | None = None
    """How long a tool call may take when its tool sets no `timeout_s` (None: no limit)."""
    datasources: Mapping[str, Datasource] = field(default_factory=dict)
    """The databases `@tool(datasource=name)` tools write to, by name."""
    structured_output: StructuredOutput | None = None
    """The typed answer asked of the model natively or through a tool (None: text, or JSON
    asked for in the system prompt)."""
    approval_timeout_s: float | None = None
    """How long a human has to decide when the tool sets no `approval_timeout_s` (None: forever)."""
    on_approval_timeout: str = "deny"
    max_waits: int = 10
    """How often one call may wait (`RetryAfter`) before its next wait is an error result."""
