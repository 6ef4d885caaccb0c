"""`GET /v1/runs/{id}/replay`: a replay beside its original, step by step.

A replay (`agent.replay`) is a run whose `run_started.replay_of` names the run it replays. This
lines both runs' decisions up (`eudaimon.runtime.process.replay.compare`): the calls made and their
arguments, or the final text, and the first step where they differ, which the inspector marks.
"""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from eudaimon.core.errors import InvalidOperation
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.replay import compare
from eudaimon.server.context import Ctx, Viewer
from eudaimon.server.responses import ERRORS


class ReplayDecision(BaseModel):
    calls: list[dict[str, Any]] = Field(description="Each call made: `tool` and `arguments`.")
    text: str


class ReplayStepView(BaseModel):
    step: int
    same: bool
    original: ReplayDecision | None
    replay: ReplayDecision | None


class ReplayDiff(BaseModel):
    run_id: str
    of: str
    status: str
    original_status: str
    version: str
    original_version: str
    diverged_at: int | None = Field(description="The first step (from 1) whose decisions differ; null: none.")
    steps: list[ReplayStepView]


router = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)


@router.get("/runs/{run_id}/replay", summary="Read a replay beside its original", response_model=ReplayDiff)
async def replay_diff(ctx: Ctx, run_id: str, principal: Viewer) -> dict[str, Any]:
    """The replay's decisions and its original's, step by step (409 for a run that is no replay)."""
    replay = await load_state(ctx.store, run_id)
    if replay.replay_of is None:
        raise InvalidOperation(f"run {run_id} is not a replay")
    original = await load_state(ctx.store, replay.replay_of)
    steps, first = compare(original, replay)
    return {
        "run_id": run_id,
        "of": original.run_id,
        "status": replay.status.value,
        "original_status": original.status.value,
        "version": replay.version,
        "original_version": original.version,
        "diverged_at": first,
        "steps": [s.as_dict() for s in steps],
    }
