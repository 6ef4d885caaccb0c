"""`GET /v1/runs/{id}/effects`: the calls with effects a run started after an event.

A fork re-runs whatever its parent did after the fork point, under new idempotency keys: the
inspector asks before forking, naming these calls. A call's effect class comes from the
journal's record of its tool (remote tools), else from the served agent's tool of that name;
a tool neither knows is `unknown`, which a careful reader treats as a write.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from eudaimon.core.errors import RunNotFound
from eudaimon.core.events import RunStarted, ToolStarted
from eudaimon.server.auth import Principal
from eudaimon.server.context import ServerContext, guards
from eudaimon.server.responses import ERRORS
from eudaimon.server.schemas import SEQ_MAX


class EffectCall(BaseModel):
    call_id: str
    tool: str
    effect: str = Field(description="read, write, irreversible, or unknown (a tool this server does not know).")
    seq: int = Field(description="The call's first tool_started.")
    arguments: dict[str, Any] | str


class EffectCalls(BaseModel):
    calls: list[EffectCall]


def router(ctx: ServerContext) -> APIRouter:
    viewer, _ = guards(ctx)
    api = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)

    @api.get(
        "/runs/{run_id}/effects", summary="Read the calls a run started after an event", response_model=EffectCalls
    )
    async def effects(
        run_id: str,
        principal: Annotated[Principal, Depends(viewer)],
        after_seq: Annotated[int, Query(ge=-1, le=SEQ_MAX, description="Only calls started after this event.")] = -1,
    ) -> dict[str, Any]:
        """Each call started after `after_seq` once, with its tool's effect class."""
        events = await ctx.store.load(run_id)
        if not events:
            raise RunNotFound(run_id)
        first = next((e.data for e in events[:2] if isinstance(e.data, RunStarted)), None)
        if first is None:  # queued, never started: it ran nothing
            return {"calls": []}
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
        return {"calls": list(calls.values())}

    return api
