"""`GET /v1/runs/{id}/effects`: every effect of a run in one place, and the calls with effects
a run started after an event.

`effects` lists each call whose effect is not READ, as `core.run_effects` computes it from the
journal: tool, effect class, datasource, idempotency key, attempts, outcome, the approval
behind it and its result, with the seqs that link it to the timeline.

A fork re-runs whatever its parent did after the fork point, under new idempotency keys: the
inspector asks before forking, naming these calls. A call's effect class comes from the
journal's record of its tool (remote tools), else from the served agent's tool of that name;
a tool neither knows is `unknown`, which a careful reader treats as a write.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from eudaimon.core.errors import RunNotFound
from eudaimon.core.events import RunStarted, ToolStarted
from eudaimon.core.run_effects import effect_as_dict, run_effects
from eudaimon.server.context import Ctx, Viewer
from eudaimon.server.responses import ERRORS
from eudaimon.server.schemas import SEQ_MAX


class EffectCall(BaseModel):
    call_id: str
    tool: str
    effect: str = Field(description="read, write, irreversible, or unknown (a tool this server does not know).")
    seq: int = Field(description="The call's first tool_started.")
    arguments: dict[str, Any] | str


class EffectApprovalView(BaseModel):
    reason: str = ""
    requested_at: str | None = None
    approved: bool | None = None
    by: str | None = None
    decided_at: str | None = None
    note: str | None = None
    arguments: Any = Field(default=None, description="The arguments the call ran with, when the approver edited them.")
    edited_from: Any = Field(default=None, description="The arguments the model proposed, when edited.")


class RunEffectView(BaseModel):
    call_id: str
    tool: str
    effect: str = Field(description="write, irreversible, or unknown; READ calls are not listed.")
    datasource: str | None = None
    idempotency_key: str | None = None
    attempts: int
    outcome: str = Field(
        description="done, committed (in its datasource), in_doubt, reconciled, denied, never_ran, running, "
        "awaiting_approval."
    )
    recovered: bool = Field(description="Committed before its process died; recovery read it back.")
    reconciled_by: str | None = None
    reconciled_with: str | None = None
    approval: EffectApprovalView | None = None
    result: str | None = None
    is_error: bool = False
    arguments: Any = None
    started_seq: int | None = None
    ended_seq: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    denied_reason: str | None = None


class EffectCalls(BaseModel):
    calls: list[EffectCall]
    effects: list[RunEffectView] = Field(
        default_factory=list, description="Every call of the run whose effect is not READ, however it ended."
    )


router = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)


@router.get("/runs/{run_id}/effects", summary="Read the calls a run started after an event", response_model=EffectCalls)
async def effects(
    ctx: Ctx,
    run_id: str,
    principal: Viewer,
    after_seq: Annotated[int, Query(ge=-1, le=SEQ_MAX, description="Only calls started after this event.")] = -1,
) -> dict[str, Any]:
    """Each call started after `after_seq` once, with its tool's effect class."""
    events = await ctx.store.load(run_id)
    if not events:
        raise RunNotFound(run_id)
    first = next((e.data for e in events[:2] if isinstance(e.data, RunStarted)), None)
    if first is None:  # queued, never started: it ran nothing
        return {"calls": [], "effects": []}
    known = {record.name: record.effect for record in first.tools}
    agent = ctx.agents.get(first.agent)
    served = {name: tool.effect.value for name, tool in agent.tools.items()} if agent is not None else {}
    calls: dict[str, dict[str, Any]] = {}
    for event in events:
        data = event.data
        if event.seq <= after_seq or not isinstance(data, ToolStarted) or data.call_id in calls:
            continue
        effect = known.get(data.tool) or served.get(data.tool) or "unknown"
        calls[data.call_id] = {
            "call_id": data.call_id,
            "tool": data.tool,
            "effect": effect,
            "seq": event.seq,
            "arguments": data.arguments,
        }
    listed = [effect_as_dict(row) for row in run_effects(events, declared={**served, **known})]
    return {"calls": list(calls.values()), "effects": listed}
