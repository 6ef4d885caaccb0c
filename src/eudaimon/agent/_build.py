"""Turning `Agent(...)` arguments into a `RuntimeConfig`, with every mistake caught here.

Schemas are compiled, tool names checked, templates rendered and prices looked up once, when
the agent is built, so that a run never discovers a configuration error halfway through.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eudaimon.agent._contracts import check_model
from eudaimon.core.decide import DecideConfig
from eudaimon.core.digest import digest
from eudaimon.core.errors import ConfigurationError, ToolRetryIgnored
from eudaimon.core.settings import NO_SETTINGS, TOOL_CHOICE_MODES, ModelSettings
from eudaimon.extensions.cost import Budget, as_cost_model, has_price, price_usage
from eudaimon.extensions.hooks import HookSet
from eudaimon.extensions.middleware import MiddlewareStack
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.models.base import Model, check_model_settings
from eudaimon.models.registry import infer_model
from eudaimon.runtime.config import Pricer, RuntimeConfig
from eudaimon.runtime.output import OutputCheck, OutputSchema
from eudaimon.stores.base import EventStore
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.url import open_store
from eudaimon.tools import Tool, as_tool
from eudaimon.tools.toolsets import Toolset

Instructions = Callable[..., Any]
"""A dynamic system prompt: `fn()` or `fn(ctx)`, sync or async, returning the text for a run."""


@dataclass(frozen=True, slots=True)
class BuiltAgent:
    config: RuntimeConfig
    store: EventStore
    system_prompt: str | None
    output: OutputSchema | None
    config_digest: str
    instructions: Instructions | None = None
    """A `system_prompt` given as a function, rendered for each run."""
    output_instruction: str | None = None
    """What `output_type` adds to the system prompt (after a dynamic one, once rendered)."""
    toolsets: tuple[Toolset, ...] = ()


def build_runtime_config(
    *,
    model: Model | str,
    name: str,
    system_prompt: str | Instructions | None,
    prompt_template: Any,
    tools: Sequence[Tool | Toolset | Callable[..., Any]],
    hooks: Any,
    max_iterations: int,
    temperature: float | None,
    max_tokens: int | None,
    validate_tool_inputs: bool,
    middleware: Any,
    output_guardrails: Sequence[Any],
    cost_model: Any,
    max_budget: float | None,
    max_budget_tokens: int | None,
    tool_retry_policy: Any,
    human_input: Any,
    output_type: Any,
    store: EventStore | str | None,
    approval_policy: Any,
    model_settings: ModelSettings | None = None,
    output_validators: Sequence[Any] = (),
    max_output_retries: int = 2,
    tool_timeout_s: float | None = None,
) -> BuiltAgent:
    if max_iterations < 1:
        raise ConfigurationError(f"max_iterations must be at least 1, got {max_iterations}")
    if max_output_retries < 0:
        raise ConfigurationError(f"max_output_retries must be 0 or more, got {max_output_retries}")
    if tool_timeout_s is not None and not tool_timeout_s > 0:
        raise ConfigurationError(f"tool_timeout_s must be a positive number of seconds, got {tool_timeout_s!r}")
    resolved = infer_model(model)
    check_model(resolved)
    toolsets = tuple(t for t in tools if isinstance(t, Toolset))
    compiled = _compile_tools([t for t in tools if not isinstance(t, Toolset)], human_input)
    if tool_retry_policy is not None:
        _warn_unretried(tool_retry_policy, compiled)
    instructions = system_prompt if callable(system_prompt) else None
    if instructions is not None and prompt_template is not None:
        raise ConfigurationError("give either a system_prompt function or a prompt_template, not both")
    prompt = _system_prompt(system_prompt if isinstance(system_prompt, str) else None, prompt_template)
    output = OutputSchema.of(output_type) if output_type is not None else None
    if output is not None and instructions is None:
        prompt = f"{prompt}\n\n{output.instruction}" if prompt else output.instruction
    if model_settings is not None and not isinstance(model_settings, ModelSettings):
        raise ConfigurationError(f"model_settings must be a ModelSettings, got {type(model_settings).__name__}")
    settings = ModelSettings(temperature=temperature, max_tokens=max_tokens).merged(model_settings)
    if settings == NO_SETTINGS:
        settings = NO_SETTINGS  # the shared value: a step then skips settings work by identity
    check_settings(resolved, settings, compiled)
    price = _pricer(cost_model, max_budget, resolved)
    hook_set = HookSet(hooks) if hooks else None
    stack = MiddlewareStack(middleware) if middleware else None
    config = RuntimeConfig(
        agent=name,
        model=resolved,
        tools=compiled,
        tool_specs=tuple(t.spec for t in compiled.values()),
        decide=DecideConfig(
            max_iterations=max_iterations,
            tools={n: t.traits for n, t in compiled.items()},
            max_finish_rejections=max_output_retries + 1,
        ),
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        validate_tool_inputs=validate_tool_inputs,
        hooks=hook_set or None,
        middleware=stack or None,
        output_guardrails=tuple(output_guardrails),
        price=price,
        budget=None if max_budget is None and max_budget_tokens is None else Budget(max_budget, max_budget_tokens),
        tool_retry_policy=tool_retry_policy,
        approval_policy=approval_policy,
        output_validator=OutputCheck.of(output, output_validators),
        model_settings=settings,
        prepared=any(t.prepare is not None for t in compiled.values()),
        tool_timeout_s=tool_timeout_s,
    )
    described: dict[str, Any] = {"toolsets": [t.source for t in toolsets]} if toolsets else {}
    config_digest = digest(
        {
            **described,
            "agent": name,
            "model": resolved.model_id,
            "system_prompt": prompt if instructions is None else _qualname(instructions),
            "tools": [(t.name, t.parameters, t.effect.value, t.idempotent) for t in compiled.values()],
            "max_iterations": max_iterations,
            "temperature": temperature,
            "max_tokens": max_tokens,
            **({"model_settings": settings.as_dict()} if settings != NO_SETTINGS else {}),
        }
    )
    return BuiltAgent(
        config,
        _store(store),
        prompt,
        output,
        config_digest,
        instructions=instructions,
        output_instruction=output.instruction if output is not None else None,
        toolsets=toolsets,
    )


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


def _pricer(cost_model: Any, max_budget: float | None, model: Model) -> Pricer | None:
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


def _store(store: EventStore | str | None) -> EventStore:
    if store is None:
        url = os.environ.get("EUDAIMON_STORE")
        return open_store(url) if url else MemoryStore()
    return open_store(store) if isinstance(store, str) else store
