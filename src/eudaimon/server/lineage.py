"""`GET /v1/runs/{id}/tree`: the run's place among runs, for the inspector's tree and waterfall.

A run may be a child (an agent called as a tool, a handoff) or a fork; the answer names the
root of its tree and lists every run below that root, depth first, with when each started and
last changed, so a page can draw child runs on the parent's time axis.
"""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import RunState
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.tree import run_tree
from eudaimon.server.context import Ctx, ServerContext, Viewer
from eudaimon.server.responses import ERRORS

MAX_DEPTH = 64
"""A guard against a parent link that loops (a hand-edited journal): the climb stops there."""


class TreeNode(BaseModel):
    run_id: str
    agent: str
    status: str
    depth: int = Field(description="0 for the root of the tree.")
    call_id: str = Field(description="The parent's call that started this run ('' for the root).")
    parent_run_id: str | None
    created_at: str | None
    updated_at: str | None


class RunTree(BaseModel):
    run_id: str = Field(description="The run asked about.")
    root: str = Field(description="The top of its tree of child runs.")
    forked_from: dict[str, Any] | None = Field(description="`{run_id, seq}` when the run asked about is a fork.")
    runs: list[TreeNode]


router = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)


@router.get("/runs/{run_id}/tree", summary="Read a run's tree of child runs", response_model=RunTree)
async def tree(ctx: Ctx, run_id: str, principal: Viewer) -> dict[str, Any]:
    """The root above this run and every run below that root, depth first."""
    state = await load_state(ctx.store, run_id)
    root = state
    for _ in range(MAX_DEPTH):
        if root.parent_call is None:
            break
        try:
            root = await load_state(ctx.store, root.parent_call.run_id)
        except RunNotFound:
            break
    nodes = [await _node(ctx, depth, call_id, run) for depth, call_id, run in await run_tree(ctx.store, root)]
    forked = None if state.parent is None else {"run_id": state.parent.run_id, "seq": state.parent.seq}
    return {"run_id": run_id, "root": root.run_id, "forked_from": forked, "runs": nodes}


async def _node(ctx: ServerContext, depth: int, call_id: str, state: RunState) -> dict[str, Any]:
    first = await ctx.store.load(state.run_id, after_seq=-1)
    return {
        "run_id": state.run_id,
        "agent": state.agent,
        "status": state.status.value,
        "depth": depth,
        "call_id": call_id,
        "parent_run_id": state.parent_call.run_id if state.parent_call else None,
        "created_at": first[0].at.isoformat() if first else None,
        "updated_at": first[-1].at.isoformat() if first else None,
    }
