"""The steps of turning `Agent(...)` arguments into its `AgentRuntime`, with every mistake caught here.

Schemas are compiled, tool names checked, templates rendered and prices looked up once, when
the agent is built, so that a run never discovers a configuration error halfway through.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal

from eudaimon.agent._contracts import check_memory, check_model
from eudaimon.core.digest import digest
from eudaimon.core.errors import ConfigurationError, ToolRetryIgnored
from eudaimon.core.fingerprint import fingerprint
from eudaimon.core.settings import NO_SETTINGS, TOOL_CHOICE_MODES, ModelSettings
from eudaimon.datasources import Datasource
from eudaimon.extensions.cost import Budget, as_cost_model, has_price, price_usage
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.extensions.retry import ToolRetryPolicy
from eudaimon.memory import Memory, SlidingWindowMemory
from eudaimon.models.base import Model, StructuredOutput, check_model_settings
from eudaimon.models.output import choose, unwrap
from eudaimon.models.registry import infer_model
from eudaimon.runtime.loop.config import Pricer, RuntimeConfig
from eudaimon.runtime.process.agent_change import AgentIdentity, OnChange
from eudaimon.runtime.process.output import OutputSchema
from eudaimon.stores.base import EventStore
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.url import open_store
from eudaimon.tools import Tool, as_tool
from eudaimon.tools.toolsets import Toolset


class DefaultMemory(Enum):
    """The type of `DEFAULT_MEMORY`: "not passed" differs from `memory=None` (no memory)."""

    SLIDING_WINDOW = "default memory"


DEFAULT_MEMORY: Final = DefaultMemory.SLIDING_WINDOW
"""`Agent(memory=...)` when not passed: a `SlidingWindowMemory(50)`, as in Daimon."""

Instructions = Callable[..., Any]
"""A dynamic system prompt: `fn()` or `fn(ctx)`, sync or async, returning the text for a run."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """The system prompt as built: static text, or a function rendered for each run."""

    text: str | None
    """The static system prompt (with what `output_type` adds, when in the prompt)."""
    instructions: Instructions | None = None
    """A `system_prompt` given as a function, rendered for each run."""
    output_instruction: str | None = None
    """What `output_type` adds to the system prompt (after a dynamic one, once rendered)."""

    @property
    def described(self) -> str | None:
        """What the digest and fingerprint record: the text, or the function's qualified name."""
        return self.text if self.instructions is None else _qualname(self.instructions)


def build_model(model: Model | str) -> Model:
    """`model`, or the model a `"provider:model"` string names, checked."""
    resolved = infer_model(model)
    check_model(resolved)
    return resolved


def build_memory(memory: Memory | Literal[DefaultMemory.SLIDING_WINDOW] | None) -> Memory | None:
    """The agent's memory: `SlidingWindowMemory(50)` when not passed, checked."""
    built = SlidingWindowMemory(50) if memory is DEFAULT_MEMORY else memory
    if built is not None:
        check_memory(built)
    return built


def build_budget(max_budget: float | None, max_budget_tokens: int | None) -> Budget | None:
    """What a run may spend (USD, tokens); None: no limit."""
    return None if max_budget is None and max_budget_tokens is None else Budget(max_budget, max_budget_tokens)


def build_prompt(
    system_prompt: str | Callable[..., Any] | None,
    template: PromptTemplate | PromptBuilder | str | None,
    output: OutputSchema | None,
    structured: StructuredOutput | None,
) -> Prompt:
    """The system prompt from `system_prompt`, `prompt_template` and the output's instruction
    (when the model is asked for the output in the prompt: `structured` is None)."""
    instructions = system_prompt if callable(system_prompt) else None
    if instructions is not None and template is not None:
        raise ConfigurationError("give either a system_prompt function or a prompt_template, not both")
    text = _system_prompt(system_prompt if isinstance(system_prompt, str) else None, template)
    added = output.instruction if output is not None and structured is None else None
    if added is not None and instructions is None:
        text = f"{text}\n\n{added}" if text else added
    return Prompt(text, instructions, added)


def build_tools(
    tools: Sequence[Tool | Toolset | Callable[..., Any]], human_input: Any, retry_policy: ToolRetryPolicy | None
) -> tuple[dict[str, Tool], tuple[Toolset, ...]]:
    """The agent's tools compiled by name (with `ask_human` for `human_input`), and its toolsets."""
    toolsets = tuple(t for t in tools if isinstance(t, Toolset))
    compiled = _compile_tools([t for t in tools if not isinstance(t, Toolset)], human_input)
    if retry_policy is not None:
        _warn_unretried(retry_policy, compiled)
    return compiled, toolsets


def config_digest(
    config: RuntimeConfig,
    prompt: Prompt,
    toolsets: Sequence[Toolset],
    *,
    temperature: float | None,
    max_tokens: int | None,
) -> str:
    """The digest of what an agent is, recorded in each run it starts."""
    described: dict[str, Any] = {"toolsets": [t.source for t in toolsets]} if toolsets else {}
    structured = config.structured_output
    return digest(
        {
            **described,
            "agent": config.agent,
            "model": config.model.model_id,
            "system_prompt": prompt.described,
            "tools": [
                (t.name, t.parameters, t.effect.value, t.idempotent, *((t.datasource,) if t.datasource else ()))
                for t in config.tools.values()
            ],
            "max_iterations": config.decide.max_iterations,
            "temperature": temperature,
            "max_tokens": max_tokens,
            **({"model_settings": config.model_settings.as_dict()} if config.model_settings != NO_SETTINGS else {}),
            **({"output": [structured.mode, structured.name, structured.schema]} if structured is not None else {}),
        }
    )


def identity(
    config: RuntimeConfig, prompt: Prompt, output: OutputSchema | None, *, version: str, on_change: OnChange
) -> AgentIdentity:
    """The agent's version, fingerprint and what it does with a run another agent started."""
    return AgentIdentity(
        version=version,
        parts=fingerprint(
            model=config.model.model_id,
            system_prompt=prompt.described,
            output_schema=output.schema if output is not None else None,
            tools=[(t.name, t.parameters, t.effect.value) for t in config.tools.values()],
        ),
        on_change=on_change,
    )


def build_datasources(datasources: Mapping[str, Datasource] | None, tools: Mapping[str, Tool]) -> dict[str, Datasource]:
    """The agent's datasources (checked by `DurabilitySettings`), every tool's `datasource=` among them."""
    given = dict(datasources or {})
    for t in tools.values():
        if t.datasource is not None and t.datasource not in given:
            known = ", ".join(repr(n) for n in sorted(given)) or "none"
            raise ConfigurationError(
                f"tool {t.name!r} writes to datasource {t.datasource!r}, which the agent does not have "
                f"(datasources: {known}); pass Agent(datasources={{{t.datasource!r}: Datasource(url)}})"
            )
    return given


def build_output(output_type: Any, model: Model) -> tuple[OutputSchema | None, StructuredOutput | None]:
    """The finish schema, and how the model is asked for it: None when in the system prompt."""
    if output_type is None:
        return None, None
    inner, forced, spec = unwrap(output_type)
    schema = OutputSchema.of(inner)
    chosen = choose(model, forced, spec, schema.schema)
    return schema, None if chosen.mode == "prompted" else chosen


def build_model_settings(
    given: ModelSettings | None, temperature: float | None, max_tokens: int | None
) -> ModelSettings:
    """`model_settings`, with the `temperature` and `max_tokens` shorthands under it."""
    if given is not None and not isinstance(given, ModelSettings):
        raise ConfigurationError(f"model_settings must be a ModelSettings, got {type(given).__name__}")
    merged = ModelSettings(temperature=temperature, max_tokens=max_tokens).merged(given)
    return NO_SETTINGS if merged == NO_SETTINGS else merged  # the shared value: a step skips settings work by identity


def check_settings(model: Model, settings: ModelSettings, tools: Mapping[str, Tool]) -> None:
    """Refuse settings that cannot work, before anything is journaled: a `tool_choice` naming
    no tool of the agent, or a setting the model's provider does not have.

    Raises:
        ConfigurationError: saying which setting, and what to do instead.
    """
    choice = settings.tool_choice
    if choice is not None and choice not in TOOL_CHOICE_MODES and choice not in tools:
        known = ", ".join(sorted(tools)) or "none"
        raise ConfigurationError(
            f"model_settings.tool_choice={choice!r} is neither 'auto', 'none', 'required' nor a tool of "
            f"this agent (tools: {known})"
        )
    check_model_settings(model, settings)


def _qualname(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def _compile_tools(tools: Sequence[Tool | Callable[..., Any]], human_input: Any) -> dict[str, Tool]:
    items = [as_tool(t) for t in tools]
    if human_input is not None:
        from eudaimon.extensions.hitl import ask_human_tool

        items.append(ask_human_tool(human_input))
    compiled: dict[str, Tool] = {}
    for item in items:
        if item.name in compiled:
            raise ConfigurationError(f"two tools are named {item.name!r}; tool names must be unique")
        compiled[item.name] = item.compiled()
    return compiled


def _warn_unretried(policy: Any, tools: dict[str, Tool]) -> None:
    """Say, once, at build, which tools the retry policy will not re-run, and how to opt in.

    A warning, not an error: the agent works, the policy applies to the tools that are safe to
    re-run, and a program that mixes read and write tools under one policy stays valid. Turn it
    into an error with `warnings.simplefilter("error", ToolRetryIgnored)`.
    """
    skipped = sorted(
        name for name, t in tools.items() if not t.retries_on_error and policy.policy_for(name).max_attempts > 1
    )
    if skipped:
        warnings.warn(
            ToolRetryIgnored(
                f"tool_retry_policy will not retry {', '.join(repr(n) for n in skipped)}: a WRITE or "
                "IRREVERSIBLE tool that raised may have half-acted. Declare effect='read' or idempotent=True "
                "when running it twice is harmless, or @tool(retryable=True) to retry it anyway"
            ),
            stacklevel=4,
        )


def _system_prompt(system_prompt: str | None, template: Any) -> str | None:
    if template is None:
        return system_prompt
    if isinstance(template, str):
        template = PromptTemplate(template)
    elif isinstance(template, PromptBuilder):
        template = template.build()
    if not isinstance(template, PromptTemplate):
        raise ConfigurationError(
            f"prompt_template must be a PromptTemplate, a PromptBuilder or a string, got {type(template).__name__}"
        )
    missing = template.missing_variables()
    if missing:
        raise ConfigurationError(
            f"prompt_template has no value for {', '.join(missing)}; set them with .var(name, value)"
        )
    rendered: str = template.render_static()
    return rendered


def build_pricer(cost_model: Any, max_budget: float | None, model: Model) -> Pricer | None:
    if cost_model is None:
        if max_budget is not None:
            raise ConfigurationError(
                "max_budget is in USD and needs a cost_model to price calls, e.g. cost_model=OpenAICostModel()"
            )
        return None
    prices = as_cost_model(cost_model)
    if max_budget is not None and not has_price(prices, model.model_id):
        raise ConfigurationError(
            f"max_budget is set but {type(prices).__name__} has no price for model {model.model_id!r}; "
            "a budget that cannot be measured would never stop the run"
        )

    def price(model_id: str, usage: Any) -> float | None:
        return price_usage(prices, model_id, usage)

    return price


def open_agent_store(store: EventStore | str | None) -> EventStore:
    """`store` as given, opened from its URL, or `$EUDAIMON_STORE`, else a new in-memory store."""
    if store is None:
        url = os.environ.get("EUDAIMON_STORE")
        return open_store(url) if url else MemoryStore()
    return open_store(store) if isinstance(store, str) else store
