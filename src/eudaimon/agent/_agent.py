"""`Agent`: the public face of eudaimon. Every prompt is a durable run in `agent.store`.

This module builds one: its keyword arguments, checked and compiled (`_build.py`), become its
`AgentRuntime`. What it then does with runs is in its two bases: `DrivenRuns` (prompt, resume,
replay: runs this process drives) and `StoredRuns` (state, approve, reconcile, fork: runs in the
store, whoever drives them).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Never

from eudaimon.agent._build import (
    DEFAULT_MEMORY,
    DefaultMemory,
    build_budget,
    build_datasources,
    build_memory,
    build_model,
    build_model_settings,
    build_output,
    build_pricer,
    build_prompt,
    build_tools,
    check_settings,
    config_digest,
    identity,
    open_agent_store,
)
from eudaimon.agent._delegation import agent_tool, handoff_tool
from eudaimon.agent._driven_runs import DrivenRuns
from eudaimon.agent._options import misplaced_option
from eudaimon.agent._stored_runs import StoredRuns
from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.agent.settings import ApprovalSettings, DurabilitySettings, RunLimits, settled
from eudaimon.core.decide import DecideConfig
from eudaimon.core.settings import ModelSettings
from eudaimon.datasources import Datasource
from eudaimon.extensions.cost import CostModel
from eudaimon.extensions.guardrails import Guardrail
from eudaimon.extensions.hitl import HumanInputHandler
from eudaimon.extensions.hooks import AgentHook, HookSet
from eudaimon.extensions.middleware import Middleware, MiddlewareStack
from eudaimon.extensions.prompts import PromptBuilder, PromptTemplate
from eudaimon.extensions.retry import ToolRetryPolicy
from eudaimon.memory import Memory
from eudaimon.models.base import Model
from eudaimon.models.output import NativeOutput, PromptedOutput, ToolOutput
from eudaimon.runtime.loop.config import ApprovalPolicy, RuntimeConfig
from eudaimon.runtime.process.agent_change import AgentIdentity
from eudaimon.runtime.process.engines import Engine, open_engine
from eudaimon.runtime.process.output import OutputCheck
from eudaimon.runtime.process.response import OutputT
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool
from eudaimon.tools.context import DepsT
from eudaimon.tools.toolsets import Toolset


class Agent(StoredRuns, DrivenRuns[DepsT, OutputT]):
    """An agent: a model, its tools and the rules it runs by, journaled to a store.

    `Agent[Deps, Output]` is generic in the type of its `deps` and of `response.output`, both
    inferred from `deps_type` and `output_type`, so `mypy --strict` checks `ctx.deps.db` in a
    tool and `response.output.city` in the caller.

    Its settings come in groups, as `model_settings` does: `limits` (`RunLimits`), `approvals`
    (`ApprovalSettings`) and `durability` (`DurabilitySettings`), each one value that several
    agents may share. Each of their fields is also a keyword of its own (`max_iterations=`,
    `approval_timeout_s=`, `store=`…); a keyword left at its default yields to the group, one
    that disagrees with it is refused.

    Args:
        model: a `Model`, or a `"provider:model"` string such as `"openai:gpt-4o-mini"`.
        system_prompt: the instructions sent first in every run: a string, or a function
            (`fn()` or `fn(ctx: ToolContext[Deps])`, sync or async) rendered when each run
            starts; the rendered text is journaled in `run_started`. A static string and
            `prompt_template` cannot both be given with a function.
        prompt_template: a `PromptTemplate`, `PromptBuilder` or template string rendered
            once, at build; it wins over a string `system_prompt`.
        tools: `Tool`s, plain typed functions (wrapped with `@tool`) and toolsets such as
            `eudaimon.mcp.MCPTools`, whose tools are listed when a run starts and journaled
            with it; names must be unique.
        memory: which history a prompt is sent. Not passed: a `SlidingWindowMemory(50)`,
            as in Daimon, and a prompt without `thread_id` continues the agent's one default
            thread (`"{name}:default"`): every such prompt shares that history, and they run
            one at a time. `None`: no memory; a prompt without `thread_id` then belongs to no
            thread at all (its own history only, no thread lease), which is what a server
            answering many users wants. With a `thread_id`, a prompt always continues that
            thread.
        hooks: an `AgentHook`, or a sequence of them; a method may take a `ctx: ToolContext`
            parameter. (An object with some of its methods and no base class works too, but
            type checkers want the subclass.)
        max_iterations: model calls a run may make before it fails with `MaxIterations`
            (`RunLimits.max_iterations`).
        temperature: shorthand for `model_settings=ModelSettings(temperature=…)`.
        max_tokens: shorthand for `model_settings=ModelSettings(max_tokens=…)`.
        validate_tool_inputs: validate tool arguments strictly against their JSON Schema
            (False: pydantic coerces what it can).
        middleware: a `Middleware` or a sequence of them, around every model and tool call
            (subclasses, as for hooks).
        input_guardrails: checked on each prompt's text before anything is journaled.
        output_guardrails: checked on each final answer before it is accepted.
        cost_model: prices every call (`OpenAICostModel()`, `AnthropicCostModel()`, …).
        max_budget: USD a run may spend (needs `cost_model`): `RunLimits.max_budget`.
        max_budget_tokens: tokens a run may spend: `RunLimits.max_budget_tokens`.
        tool_retry_policy: retries of READ and idempotent tools that raised.
        human_input: a `HumanInputHandler`; adds the `ask_human` tool.
        output_type: a pydantic model, any type pydantic can validate, or a JSON Schema
            dict; the final answer must be JSON that validates, else the model is asked again.
            `response.output` is then the validated value. The model is asked for it the
            strongest way it has (OpenAI and compatible servers: `response_format` with the
            JSON Schema; Anthropic: a tool whose input is the schema; else the system prompt);
            wrap the type in `NativeOutput`, `ToolOutput` or `PromptedOutput` to choose.
        output_validators: functions (`fn(output)` or `fn(ctx, output)`, sync or async) run
            in order after the schema: each returns the output to keep (None keeps it as it
            is) or raises `ModelRetry("what to fix")` to ask the model for another answer.
        max_output_retries: corrections a run may ask of the model for its final answer
            (schema or validator) before it fails with `OutputRejected` (`RunLimits.max_output_retries`).
        model_settings: a `ModelSettings` (temperature, top_p, seed, tool_choice, …) for
            every call; a prompt's own `model_settings` are merged over it key by key.
            Settings the provider does not have are refused here.
        deps_type: the type of the `deps` every prompt and resume must pass; tools,
            instructions, validators, guardrails and hooks get them as `ctx.deps`. Deps are
            never journaled.
        store: an `EventStore` or a store URL (`memory:`, `sqlite:///runs.db`,
            `postgresql://…`); defaults to `$EUDAIMON_STORE`, else an in-memory store
            (`DurabilitySettings.store`).
        name: the agent's name in the journal (and its default thread's).
        approval_policy: `fn(call, tool) -> ToolPolicy` deciding allow / deny / require
            approval per call; by default only tools that need approval wait for a human.
            `call.arguments` is the dict the tool will get (after middleware, validated);
            a call whose arguments do not validate never reaches it. A policy that raises
            sends its call to a human (`approval_requested` names the error). It may answer
            `RequireApproval(timeout_s, on_timeout)` to ask a human by a deadline.
        approval_timeout_s: how long a human has to decide a call of any tool that sets no
            `approval_timeout_s` of its own (None: no deadline). The deadline is journaled;
            when it passes with no decision, whichever process sees it first (a server's
            sweeper, this one) journals `approval_timed_out`, and a later decision is refused.
        on_approval_timeout: `"deny"` the call (the model reads "no decision within …") or
            `"cancel"` the run when a deadline passes.
        max_waits: how often one call may wait (its tool raised `RetryAfter`) before the next
            wait is an error result the model reads (`RunLimits.max_waits`).
        handoffs: agents the model may hand the conversation to, each through a tool
            `transfer_to_{name}`: the receiving agent's run continues with the history, its own
            tools and instructions, and its answer is this run's.
        engine: where runs are driven: None for this process, else an engine such as
            `eudaimon.temporal.TemporalEngine("host:7233", task_queue="agents")` or its URL
            `"temporal://host:7233/agents"`, whose workers serve this same agent module
            (`DurabilitySettings.engine`).
        description: what the agent does, for those who call it (its A2A Agent Card): never
            the system prompt, which is the operator's and is not published unless given here.
        datasources: databases by name (`{"shop": Datasource("postgresql://…")}`) that tools
            declared `@tool(datasource="shop")` write to: each call's writes commit in one
            transaction with its completion record, so they land exactly once
            (`DurabilitySettings.datasources`).
        version: the agent's own name for what it is (free text, e.g. a release), journaled in
            `run_started` beside a fingerprint of its parts (tools' schemas and effect classes,
            system prompt, model, output schema).
        on_change: what a process does with a run another agent started (its fingerprint
            differs): "continue" journals `agent_replaced` naming the differences, voids the
            approvals of calls whose tool changed (asked again) and tells the model of calls it
            can no longer make; "refuse" raises `AgentChanged` and records nothing
            (`DurabilitySettings.on_change`).
        tool_timeout_s: how long a tool call may take when its tool sets no `timeout_s`
            (`RunLimits.tool_timeout_s`; None: no limit).
        limits: a `RunLimits`: the limits above as one value.
        approvals: an `ApprovalSettings`: `approval_policy`, `approval_timeout_s` and
            `on_approval_timeout` as one value.
        durability: a `DurabilitySettings`: `store`, `engine`, `datasources`, `version` and
            `on_change` as one value.
    """

    _runtime: AgentRuntime
    """What its helpers and engines use of it (`runtime_of`): the driver of its runs, its
    toolsets, instructions."""

    def __init__(
        self,
        model: Model | str,
        *,
        system_prompt: str | Callable[..., Any] | None = None,
        prompt_template: PromptTemplate | PromptBuilder | str | None = None,
        tools: Sequence[Tool | Toolset | Callable[..., Any]] = (),
        memory: Memory | Literal[DefaultMemory.SLIDING_WINDOW] | None = DEFAULT_MEMORY,
        hooks: AgentHook | Sequence[AgentHook] | None = None,
        max_iterations: int = 25,
        temperature: float | None = None,
        max_tokens: int | None = None,
        validate_tool_inputs: bool = True,
        middleware: Middleware | Sequence[Middleware] = (),
        input_guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
        cost_model: CostModel | None = None,
        max_budget: float | None = None,
        max_budget_tokens: int | None = None,
        tool_retry_policy: ToolRetryPolicy | None = None,
        human_input: HumanInputHandler | None = None,
        output_type: type[OutputT]
        | NativeOutput[OutputT]
        | ToolOutput[OutputT]
        | PromptedOutput[OutputT]
        | dict[str, Any]
        | None = None,
        output_validators: Sequence[Callable[..., Any]] = (),
        max_output_retries: int = 2,
        model_settings: ModelSettings | None = None,
        deps_type: type[DepsT] | None = None,
        store: EventStore | str | None = None,
        name: str = "agent",
        approval_policy: ApprovalPolicy | None = None,
        tool_timeout_s: float | None = None,
        approval_timeout_s: float | None = None,
        on_approval_timeout: Literal["deny", "cancel"] = "deny",
        max_waits: int = 10,
        handoffs: Sequence[Agent[Any, Any]] = (),
        engine: Engine | str | None = None,
        description: str | None = None,
        datasources: Mapping[str, Datasource] | None = None,
        version: str = "",
        on_change: Literal["continue", "refuse"] = "continue",
        limits: RunLimits | None = None,
        approvals: ApprovalSettings | None = None,
        durability: DurabilitySettings | None = None,
        **misplaced: Never,
    ) -> None:
        # `misplaced`: keywords the agent does not take. Python's own TypeError would not say
        # that `base_url=` is the model's, nor which option a misspelt one meant.
        if misplaced:
            raise TypeError(misplaced_option(model, misplaced, inspect.signature(Agent.__init__).parameters))
        # The groups first: a limit that cannot work is refused before anything is built.
        self.limits = settled(
            RunLimits,
            limits,
            "limits",
            max_iterations=max_iterations,
            max_output_retries=max_output_retries,
            max_waits=max_waits,
            tool_timeout_s=tool_timeout_s,
            max_budget=max_budget,
            max_budget_tokens=max_budget_tokens,
        )
        self.approvals = settled(
            ApprovalSettings,
            approvals,
            "approvals",
            approval_policy=approval_policy,
            approval_timeout_s=approval_timeout_s,
            on_approval_timeout=on_approval_timeout,
        )
        self.durability = settled(
            DurabilitySettings,
            durability,
            "durability",
            store=store,
            engine=engine,
            datasources=datasources,
            version=version,
            on_change=on_change,
        )
        limits, approvals, durability = self.limits, self.approvals, self.durability
        resolved = build_model(model)
        handoff_tools = [handoff_tool(agent, agent._runtime) for agent in handoffs]
        compiled, toolsets = build_tools([*tools, *handoff_tools], human_input, tool_retry_policy)
        output, structured = build_output(output_type, resolved)
        prompt = build_prompt(system_prompt, prompt_template, output, structured)
        settings = build_model_settings(model_settings, temperature, max_tokens)
        check_settings(resolved, settings, compiled)
        config = RuntimeConfig(
            agent=name,
            model=resolved,
            tools=compiled,
            tool_specs=tuple(t.spec for t in compiled.values()),
            decide=DecideConfig(
                max_iterations=limits.max_iterations,
                tools={n: t.traits for n, t in compiled.items()},
                max_finish_rejections=limits.max_output_retries + 1,
            ),
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            validate_tool_inputs=validate_tool_inputs,
            hooks=HookSet(hooks) if hooks else None,
            middleware=MiddlewareStack(middleware) if middleware else None,
            output_guardrails=tuple(output_guardrails),
            price=build_pricer(cost_model, limits.max_budget, resolved),
            budget=build_budget(limits.max_budget, limits.max_budget_tokens),
            tool_retry_policy=tool_retry_policy,
            approval_policy=approvals.policy,
            output_validator=OutputCheck.of(output, output_validators),
            model_settings=settings,
            prepared=any(t.prepare is not None for t in compiled.values()),
            tool_timeout_s=limits.tool_timeout_s,
            datasources=build_datasources(durability.datasources, compiled),
            structured_output=structured,
            approval_timeout_s=approvals.timeout_s,
            on_approval_timeout=approvals.on_timeout,
            max_waits=limits.max_waits,
        )
        self.memory: Memory | None = build_memory(memory)
        self._runtime = AgentRuntime(
            config,
            open_agent_store(durability.store),
            self.memory,
            output,
            config_digest(config, prompt, toolsets, temperature=temperature, max_tokens=max_tokens),
            identity=identity(config, prompt, output, version=durability.version, on_change=durability.on_change),
            engine=open_engine(durability.engine) if isinstance(durability.engine, str) else durability.engine,
            toolsets=toolsets,
            system_prompt=prompt.text,
            instructions=prompt.instructions,
            output_instruction=prompt.output_instruction,
            carries_rejections=bool(output_guardrails),
        )
        self.name = name
        self.model = resolved
        self.system_prompt = prompt.text
        self.tools = dict(compiled)
        self.toolsets = toolsets
        self.description = description
        self.approval_policy = approvals.policy
        """What judges each call, and each approver's edit of one (`approve(arguments=…)`)."""
        self.default_thread: str | None = f"{name}:default" if self.memory is not None else None
        """The thread of prompts that name none; None (no thread) for an agent without memory."""
        self.deps_type = deps_type
        self.store: EventStore = self._runtime.store
        self._owns_store = durability.store is None or isinstance(durability.store, str)
        self._owns_model = isinstance(model, str)
        self.input_guardrails = tuple(input_guardrails)
        self.version = durability.version

    def as_tool(self, *, name: str | None = None, description: str | None = None) -> Tool:
        """This agent as another agent's tool, taking one string parameter, `input`.

        Each call is a child run of this agent, journaled in the calling run's store and linked
        to the call; resuming the caller resumes the child, the child's approvals surface on
        the caller, and what it spends counts against the caller's budget.

        Args:
            name: the tool's name (default: the agent's name).
            description: what the calling model reads about it.
        """
        return agent_tool(self, self._runtime, name=name, description=description)

    def _identity(self) -> AgentIdentity:
        return self._runtime.identity

    @property
    def decide_config(self) -> DecideConfig:
        return self._runtime.config.decide

    @property
    def model_settings(self) -> ModelSettings:
        """The settings every call of this agent uses, before a prompt's own."""
        return self._runtime.config.model_settings

    async def aclose(self) -> None:
        """Close what the agent opened itself: a store it built from a URL, a model from a string,
        its toolsets' connections."""
        for toolset in self.toolsets:
            await toolset.aclose()
        if self._owns_store:
            await self.store.close()
        if self._owns_model:
            close = getattr(self.model, "aclose", None)
            if close is not None:
                await close()

    async def __aenter__(self) -> Agent[DepsT, OutputT]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model.model_id!r}, tools={sorted(self.tools)!r})"
