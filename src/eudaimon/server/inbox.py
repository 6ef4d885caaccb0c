"""`GET /v1/inbox`: every call waiting for a person, across runs and agents, oldest first.

The runs are found in the store's index (their status), so the inbox costs one query plus a
read of each waiting run's journal, never a scan of every run. Each item says what the person is asked
(the arguments as the tool will get them: those the approval showed, or those a call of unknown
outcome was started with), since when, the deadline if there is one, and the actions the
caller's role allows.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from eudaimon.core.errors import EudaimonError
from eudaimon.core.events import AgentReplaced, ApprovalRequested, RunStarted, ToolOutcomeUnknown, ToolStarted
from eudaimon.core.fingerprint import tool_effects
from eudaimon.core.state import RunState, Status
from eudaimon.server import responses
from eudaimon.server.auth import Principal
from eudaimon.server.context import Ctx, ServerContext, Viewer
from eudaimon.server.responses import ERRORS
from eudaimon.server.views import _as_object, deadline_dict
from eudaimon.stores import index

WAITING = tuple(status.value for status in Status if status.is_paused)
"""The statuses of runs with a call waiting for a person."""


async def inbox_items(ctx: ServerContext, principal: Principal, limit: int) -> list[dict[str, Any]]:
    """The waiting calls, oldest first (by when the person was asked), at most `limit`."""
    rows = await index.query_runs(ctx.store, index.RunQuery(limit=1_000_000, statuses=WAITING))
    items: list[dict[str, Any]] = []
    for row in rows:
        try:
            events = await ctx.store.load(row.run_id)
            state = RunState.from_events(events)
        except EudaimonError:
            continue
        if state is None:
            continue
        asked: dict[str, str] = {}
        reasons: dict[str, str] = {}
        ran_with: dict[str, Any] = {}
        effects: dict[str, str] = {}
        for event in events:
            data = event.data
            if isinstance(data, RunStarted | AgentReplaced):
                effects.update(tool_effects(data.fingerprint))  # the tools the run has now
            elif isinstance(data, ApprovalRequested | ToolOutcomeUnknown):
                asked[data.call_id] = event.at.isoformat()
                if isinstance(data, ApprovalRequested):
                    reasons[data.call_id] = data.reason
            elif isinstance(data, ToolStarted) and data.arguments:
                ran_with[data.call_id] = data.arguments
        for call in state.awaiting_approval():
            items.append(
                {
                    "run_id": row.run_id,
                    "agent": row.agent,
                    "kind": "approval",
                    "call_id": call.id,
                    "tool": call.name,
                    "arguments": call.arguments,
                    "asked_at": asked.get(call.id, row.updated_at.isoformat()),
                    **deadline_dict(state, call.id),
                    "effect": effects.get(call.name),
                    "reason": reasons.get(call.id) or None,
                    "actions": ["approve", "deny"] if principal.may_operate else [],
                }
            )
        for call in state.unknown_outcomes():
            items.append(
                {
                    "run_id": row.run_id,
                    "agent": row.agent,
                    "kind": "reconciliation",
                    "call_id": call.id,
                    "tool": call.name,
                    "arguments": _as_object(ran_with.get(call.id, call.arguments)),
                    "asked_at": asked.get(call.id, row.updated_at.isoformat()),
                    "deadline": None,
                    "on_timeout": None,
                    "effect": effects.get(call.name),
                    "reason": "it started and never said how it ended; it may not run twice",
                    "actions": ["reconcile", "retry"] if principal.may_operate else [],
                }
            )
    items.sort(key=lambda item: (item["asked_at"], item["run_id"], item["call_id"]))
    return items[:limit]


router = APIRouter(prefix="/v1", tags=["inbox"], responses=ERRORS)


@router.get("/inbox", summary="Calls waiting for a person", response_model=responses.Inbox)
async def inbox(
    ctx: Ctx,
    principal: Viewer,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """Every call waiting for a decision (an approval, or the outcome of a call an operator
    must reconcile), across runs and agents, oldest first, with its deadline, its
    arguments as the tool will get them, and the actions the caller's key allows."""
    return {"items": await inbox_items(ctx, principal, limit)}
