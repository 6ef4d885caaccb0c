"""An agent used as a tool (`as_tool`, handoffs) on the fleet: its child run is driven inside
the parent call's `eudaimon.tool` activity.

Why there and not as a child workflow: a child run is already designed to be driven *by its
parent's call* (`agent/_delegation.py`): it is journaled in the parent's store under an id
derived from the parent's run and call (`child_run_id`), so calling the tool again (a retried
activity, a resumed parent) resumes that same child, whose own journal keeps its tools from
running twice; its wait suspends the parent's call. All it needs is what the local runtime
sets around each call: the `CallScope` (the parent's store, state and budget left). The tool
activity had none, so `_delegation._scope` raised "an agent tool or handoff runs only as a call
of a run". `call_scope` sets it, from the store the worker appends the parent's journal to.
A child workflow would need a second engine path for runs that have a parent (starting,
deciding and following them) for no gain in durability: the child's journal is the record.
The cost: the child's model and tool calls run in one activity (heartbeating), not one
activity each.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.scope import RUNS_A_CHILD, CallScope, current_call
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool, ToolSuspended

SUSPENDED = "ToolSuspended"
SUSPENDED_PATCH = "eudaimon.child-waits-suspend-the-call"
"""Histories recorded when a tool's `ToolSuspended` came back as an error result replay so."""


def runs_a_child(tool: Tool) -> bool:
    return bool(getattr(tool.function, RUNS_A_CHILD, False))


@contextlib.asynccontextmanager
async def call_scope(
    tool: Tool, config: RuntimeConfig, store: EventStore, run_id: str, call_id: str
) -> AsyncIterator[None]:
    """Around a tool activity: the parent call's `CallScope` for a tool that runs a child,
    as `runtime.loop.tool_calls` sets it locally (the parent's committed state: its intent, carried
    by the activity, is appended by now)."""
    if not runs_a_child(tool):
        yield
        return
    state = await load_state(store, run_id)
    budget = config.budget
    usd = tokens = None
    if budget is not None:
        usd = None if budget.max_usd is None else max(budget.max_usd - state.cost_usd, 0.0)
        tokens = None if budget.max_tokens is None else max(budget.max_tokens - state.usage.total_tokens, 0)
    token = current_call.set(CallScope(store, state, call_id, usd, tokens))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            current_call.reset(token)


def suspension_details(exc: Exception) -> list[Any]:
    """What a tool activity sends with the error of a call that must wait (`ToolSuspended`:
    a child run waits for a human or an operator), so the workflow suspends the call as a
    local run does; [] for any other error."""
    if isinstance(exc, ToolSuspended):
        return [{"wait": exc.wait, "child_run_id": exc.child_run_id}]
    return []


def suspended_from(cause: ApplicationError, *, patched: bool = False) -> ToolSuspended | None:
    """In the workflow: the `ToolSuspended` a tool activity's error stands for, or None. The
    call then waits as the child does (`approval_requested`/`tool_outcome_unknown` naming the
    child), and deciding on the parent decides in the child and releases the call. `patched`:
    the run started with every patch (`RunInput.patched`)."""
    if cause.type != SUSPENDED or not cause.details or not isinstance(cause.details[0], dict):
        return None
    if not (patched or workflow.patched(SUSPENDED_PATCH)):
        return None
    details: dict[str, Any] = cause.details[0]
    return ToolSuspended(cause.message, wait=str(details.get("wait")), child_run_id=details.get("child_run_id"))
