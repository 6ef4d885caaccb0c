"""Agents calling agents: `agent.as_tool(...)` and handoffs, each call a child run.

A child run is journaled as a run of its own in the parent's store, under an id derived from
the parent's run and call (`child_run_id`), so that calling the tool again (the parent resumed
after a crash, or after a human decided) resumes the same child instead of starting another:
the child's own journal keeps its tools from running twice. The link goes both ways: the
child's `run_started.parent_call` names the parent's call, the parent's `tool_completed` names
the child. A child that waits for a human or an operator suspends the parent's call
(`ToolSuspended`), so the wait surfaces on the parent; what the child spent is billed to the
parent and limited by what is left of the parent's budget.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from eudaimon.agent._faces import CalledAgent
from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.core.errors import RunNotFound
from eudaimon.core.events import CallRef
from eudaimon.core.messages import Message, Role
from eudaimon.core.state import RunState, Status
from eudaimon.extensions.cost import Budget
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.loop.scope import RUNS_A_CHILD, CallScope, child_run_id, current_call
from eudaimon.runtime.process.load_state import load_state
from eudaimon.tools import RetryAfter, Tool, ToolContext, ToolReturn, ToolSuspended

_NO_PARAMETERS: dict[str, object] = {"type": "object", "properties": {}, "additionalProperties": False}


def agent_tool(
    agent: CalledAgent, runtime: AgentRuntime, *, name: str | None = None, description: str | None = None
) -> Tool:
    """`agent.as_tool(...)`: a tool taking one string, `input`, answered by a child run of `agent`."""

    async def ask(input: str, ctx: ToolContext) -> ToolReturn:
        return await run_child(agent, runtime, ctx, input=input, history=None)

    setattr(ask, RUNS_A_CHILD, True)
    return Tool(
        name=name or agent.name,
        description=description or f"Ask the agent {agent.name!r}; it answers `input` with a run of its own.",
        parameters={
            "type": "object",
            "properties": {"input": {"type": "string", "description": "What to ask the agent."}},
            "required": ["input"],
            "additionalProperties": False,
        },
        function=ask,
        idempotent=True,  # calling it again resumes the same child run, whose journal guards its tools
        context_param="ctx",
        is_async=True,
    ).compiled()


def handoff_tool(agent: CalledAgent, runtime: AgentRuntime) -> Tool:
    """A tool `transfer_to_{name}` that hands the conversation to `agent`: its run continues
    with the history, its own tools and instructions, and its answer ends the parent's run."""

    async def transfer(ctx: ToolContext) -> ToolReturn:
        return await run_child(agent, runtime, ctx, input=None, history=_history(_scope()))

    setattr(transfer, RUNS_A_CHILD, True)
    return Tool(
        name=f"transfer_to_{agent.name}",
        description=f"Hand the conversation over to the agent {agent.name!r}, which answers from here on.",
        parameters=dict(_NO_PARAMETERS),
        function=transfer,
        idempotent=True,
        context_param="ctx",
        is_async=True,
    ).compiled()


def _scope() -> CallScope:
    scope = current_call.get()
    if scope is None:
        raise RuntimeError(
            "an agent tool or handoff runs only as a call of a run; use agent.prompt() to ask it directly"
        )
    return scope


def _history(scope: CallScope) -> list[Message]:
    """The parent's conversation up to the call: its own system prompt left out, and the
    message asking for the handoff too, since its calls have no results yet."""
    return [m for m in scope.state.messages[:-1] if m.role is not Role.SYSTEM]


async def run_child(
    agent: CalledAgent, runtime: AgentRuntime, ctx: ToolContext, *, input: str | None, history: list[Message] | None
) -> ToolReturn:
    """Start the child run for this call, or resume it; report how it ended."""
    scope = _scope()
    store = scope.store
    run_id = child_run_id(ctx.run_id, ctx.call_id)
    driver = runtime.driver_in(store)
    try:
        journal = RunJournal(store, await load_state(store, run_id), snapshot_every=driver.snapshot_every)
        config = await runtime.resumed_tools(journal.state)
    except RunNotFound:
        records, config = await runtime.fresh_tools()
        messages = [Message.system(agent.system_prompt)] if agent.system_prompt else []
        messages += history if history is not None else [Message.user(input or "")]
        journal = driver.start(
            messages,
            input=input if input is not None else scope.state.input,
            thread_id=None,
            run_id=run_id,
            uses_memory=False,
            tools=records,
            parent_call=CallRef(ctx.run_id, ctx.call_id),
        )
    await driver.run(journal, scope.cancel, config=_within_budget(config or driver.config, scope))
    return _outcome(agent, journal.state, handoff=history is not None)


def _within_budget(config: RuntimeConfig, scope: CallScope) -> RuntimeConfig:
    """The child may spend what is left of the parent's budget, and no more than its own."""
    if scope.budget_usd_left is None and scope.budget_tokens_left is None:
        return config
    own = config.budget or Budget()
    usd, left_usd = own.max_usd, scope.budget_usd_left
    tokens, left_tokens = own.max_tokens, scope.budget_tokens_left
    return replace(
        config,
        budget=Budget(
            left_usd if usd is None else usd if left_usd is None else min(usd, left_usd),
            left_tokens if tokens is None else tokens if left_tokens is None else min(tokens, left_tokens),
        ),
    )


def _outcome(agent: CalledAgent, state: RunState, *, handoff: bool) -> ToolReturn:
    run_id = state.run_id
    if state.status is Status.AWAITING_APPROVAL:
        waiting = ", ".join(f"{c.id} ({c.name})" for c in state.awaiting_approval()) or "a child of its own"
        raise ToolSuspended(
            f"child run {run_id} of agent {agent.name!r} waits for approval of {waiting}",
            wait="approval",
            child_run_id=run_id,
        )
    if state.status is Status.AWAITING_RECONCILIATION:
        unknown = ", ".join(f"{c.id} ({c.name})" for c in state.unknown_outcomes()) or "a child of its own"
        raise ToolSuspended(
            f"child run {run_id} of agent {agent.name!r} has calls of unknown outcome: {unknown}",
            wait="reconciliation",
            child_run_id=run_id,
        )
    if state.status is Status.WAITING:  # the child's call sleeps (RetryAfter): so does this call
        wakes = [p.wake_at for p in state.calls.values() if p.wake_at is not None]
        seconds = max(0.0, (min(wakes) - datetime.now(UTC)).total_seconds()) if wakes else 0.0
        raise RetryAfter(seconds, reason=f"child run {run_id} of agent {agent.name!r} waits (RetryAfter)")
    cost = state.cost_usd if state.cost_known else None
    if state.status is Status.COMPLETED:
        return ToolReturn(
            output=state.output or "",
            child_run_id=run_id,
            usage=state.usage,
            cost_usd=cost,
            handoff_to=agent.name if handoff else None,
        )
    return ToolReturn(
        output=f"agent {agent.name!r} did not answer: its run {run_id} ended {state.status.value}: {state.error}",
        is_error=True,
        child_run_id=run_id,
        usage=state.usage,
        cost_usd=cost,
    )
