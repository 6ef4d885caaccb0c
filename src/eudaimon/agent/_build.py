"""Turning `Agent(...)` arguments into a `RuntimeConfig`, with every mistake caught here.

Schemas are compiled, tool names checked, templates rendered and prices looked up once, when
the agent is built, so that a run never discovers a configuration error halfway through.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eudaimon.agent._contracts import check_model
from eudaimon.agent._settings import AgentSettings
from eudaimon.core.decide import DecideConfig
from eudaimon.core.digest import digest
from eudaimon.core.errors import ConfigurationError, ToolRetryIgnored
from eudaimon.core.fingerprint import fingerprint
from eudaimon.core.settings import NO_SETTINGS, TOOL_CHOICE_MODES, ModelSettings
from eudaimon.datasources import Datasource
from eudaimon.extensions.cost import Budget, as_cost_model, has_price, price_usage
from eudaimon.extensions.hooks import HookSet
from eudaimon.extensions.middleware import MiddlewareStack
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.models.base import Model, StructuredOutput, check_model_settings
from eudaimon.models.output import choose, unwrap
from eudaimon.models.registry import infer_model
from eudaimon.runtime.loop.config import Pricer, RuntimeConfig
from eudaimon.runtime.process.agent_change import AgentIdentity, OnChange
from eudaimon.runtime.process.output import OutputCheck, OutputSchema
from eudaimon.stores.base import EventStore
from eudaimon.stores.memory import MemoryStore
from eudaimon.stores.url import open_store
from eudaimon.tools import Tool, as_tool
from eudaimon.tools._time import check_timeout
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
    identity: AgentIdentity = field(default_factory=AgentIdentity)
    """The agent's version, fingerprint and what it does with a run another agent started."""


def build_runtime_config(settings: AgentSettings, *, handoffs: Sequence[Tool] = ()) -> BuiltAgent:
    """The agent `settings` describe, checked and compiled; `handoffs` are its `transfer_to_…`
    tools, built by the agent from `settings.handoffs`.

    Raises:
        ConfigurationError: an argument that cannot work, saying which and what to do instead.
    """
    _check_limits(settings)
    system_prompt = settings.system_prompt
    resolved = infer_model(settings.model)
    check_model(resolved)
    tools = [*settings.tools, *handoffs]
    toolsets = tuple(t for t in tools if isinstance(t, Toolset))
    compiled = _compile_tools([t for t in tools if not isinstance(t, Toolset)], settings.human_input)
    if settings.tool_retry_policy is not None:
        _warn_unretried(settings.tool_retry_policy, compiled)
    instructions = system_prompt if callable(system_prompt) else None
    if instructions is not None and settings.prompt_template is not None:
        raise ConfigurationError("give either a system_prompt function or a prompt_template, not both")
    prompt = _system_prompt(system_prompt if isinstance(system_prompt, str) else None, settings.prompt_template)
    output, structured = _output(settings.output_type, resolved)
    if output is not None and structured is None and instructions is None:
        prompt = f"{prompt}\n\n{output.instruction}" if prompt else output.instruction
    model_settings = _model_settings(settings)
    check_settings(resolved, model_settings, compiled)
    price = _pricer(settings.cost_model, settings.max_budget, resolved)
    limits = (settings.max_budget, settings.max_budget_tokens)
    hook_set = HookSet(settings.hooks) if settings.hooks else None
    stack = MiddlewareStack(settings.middleware) if settings.middleware else None
    config = RuntimeConfig(
        agent=settings.name,
        model=resolved,
        tools=compiled,
        tool_specs=tuple(t.spec for t in compiled.values()),
        decide=DecideConfig(
            max_iterations=settings.max_iterations,
            tools={n: t.traits for n, t in compiled.items()},
            max_finish_rejections=settings.max_output_retries + 1,
        ),
        temperature=model_settings.temperature,
        max_tokens=model_settings.max_tokens,
        validate_tool_inputs=settings.validate_tool_inputs,
        hooks=hook_set or None,
        middleware=stack or None,
        output_guardrails=tuple(settings.output_guardrails),
        price=price,
        budget=None if limits == (None, None) else Budget(*limits),
        tool_retry_policy=settings.tool_retry_policy,
        approval_policy=settings.approval_policy,
        output_validator=OutputCheck.of(output, settings.output_validators),
        model_settings=model_settings,
        prepared=any(t.prepare is not None for t in compiled.values()),
        tool_timeout_s=settings.tool_timeout_s,
        datasources=_datasources(settings, compiled),
        structured_output=structured,
        approval_timeout_s=settings.approval_timeout_s,
        on_approval_timeout=settings.on_approval_timeout,
        max_waits=settings.max_waits,
    )
    described: dict[str, Any] = {"toolsets": [t.source for t in toolsets]} if toolsets else {}
    config_digest = digest(
        {
            **described,
            "agent": settings.name,
            "model": resolved.model_id,
            "system_prompt": prompt if instructions is None else _qualname(instructions),
            "tools": [
                (t.name, t.parameters, t.effect.value, t.idempotent, *((t.datasource,) if t.datasource else ()))
                for t in compiled.values()
            ],
            "max_iterations": settings.max_iterations,
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            **({"model_settings": model_settings.as_dict()} if model_settings != NO_SETTINGS else {}),
            **({"output": [structured.mode, structured.name, structured.schema]} if structured is not None else {}),
        }
    )
    identity = AgentIdentity(
        version=settings.version,
        parts=fingerprint(
            model=resolved.model_id,
            system_prompt=prompt if instructions is None else _qualname(instructions),
            output_schema=output.schema if output is not None else None,
            tools=[(t.name, t.parameters, t.effect.value) for t in compiled.values()],
        ),
        on_change=_on_change(settings.on_change),
    )
    return BuiltAgent(
        config,
        _store(settings.store),
        prompt,
        output,
        config_digest,
        instructions=instructions,
        output_instruction=output.instruction if output is not None and structured is None else None,
        toolsets=toolsets,
        identity=identity,
    )


def _datasources(settings: AgentSettings, tools: Mapping[str, Tool]) -> dict[str, Datasource]:
    """The agent's datasources, every tool's `datasource=` among them."""
    given = dict(settings.datasources or {})
    for name, source in given.items():
        if not isinstance(source, Datasource):
            raise ConfigurationError(f"datasources[{name!r}] must be a Datasource(url), got {type(source).__name__}")
    for t in tools.values():
        if t.datasource is not None and t.datasource not in given:
            known = ", ".join(repr(n) for n in sorted(given)) or "none"
            raise ConfigurationError(
                f"tool {t.name!r} writes to datasource {t.datasource!r}, which the agent does not have "
                f"(datasources: {known}); pass Agent(datasources={{{t.datasource!r}: Datasource(url)}})"
            )
    return given


def _output(output_type: Any, model: Model) -> tuple[OutputSchema | None, StructuredOutput | None]:
    """The finish schema, and how the model is asked for it: None when in the system prompt."""
    if output_type is None:
        return None, None
    inner, forced, spec = unwrap(output_type)
    schema = OutputSchema.of(inner)
    chosen = choose(model, forced, spec, schema.schema)
    return schema, None if chosen.mode == "prompted" else chosen


def _on_change(value: str) -> OnChange:
    if value not in ("continue", "refuse"):
        raise ConfigurationError(f"on_change must be 'continue' or 'refuse', got {value!r}")
    return "refuse" if value == "refuse" else "continue"


def _check_limits(settings: AgentSettings) -> None:
    if settings.max_iterations < 1:
        raise ConfigurationError(f"max_iterations must be at least 1, got {settings.max_iterations}")
    if settings.max_output_retries < 0:
        raise ConfigurationError(f"max_output_retries must be 0 or more, got {settings.max_output_retries}")
    timeout = settings.tool_timeout_s
    if timeout is not None and not timeout > 0:
        raise ConfigurationError(f"tool_timeout_s must be a positive number of seconds, got {timeout!r}")
    check_timeout(settings.approval_timeout_s, settings.on_approval_timeout, f"agent {settings.name!r}")
    if settings.max_waits < 0:
        raise ConfigurationError(f"max_waits must be 0 or more, got {settings.max_waits}")


def _model_settings(settings: AgentSettings) -> ModelSettings:
    """`model_settings`, with the `temperature` and `max_tokens` shorthands under it."""
    given = settings.model_settings
    if given is not None and not isinstance(given, ModelSettings):
        raise ConfigurationError(f"model_settings must be a ModelSettings, got {type(given).__name__}")
    merged = ModelSettings(temperature=settings.temperature, max_tokens=settings.max_tokens).merged(given)
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
