"""`/v1/threads`: conversations, read from the runs that make them up."""

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query

from eudaimon.core.run_index import sortable
from eudaimon.runtime.process.threads import thread_state
from eudaimon.server import responses
from eudaimon.server.context import Ctx, Viewer
from eudaimon.server.responses import ERRORS
from eudaimon.server.runs import ALL, undriven
from eudaimon.server.views import row_dict, usage_dict
from eudaimon.stores import index
from eudaimon.stores.base import RunSummary

router = APIRouter(prefix="/v1/threads", tags=["threads"], responses=ERRORS)


@router.get("", summary="List threads", response_model=responses.ThreadList)
async def list_threads(
    ctx: Ctx, principal: Viewer, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> dict[str, Any]:
    """Threads, most recently active first, with their run counts."""
    by_thread: dict[str, list[RunSummary]] = {}
    for summary in await ctx.store.list_runs(limit=ALL):
        if summary.thread_id is not None:
            by_thread.setdefault(summary.thread_id, []).append(summary)
    threads = sorted(by_thread.items(), key=lambda item: max(r.updated_at for r in item[1]), reverse=True)
    return {
        "threads": [
            {
                "thread_id": thread_id,
                "agent": runs[0].agent,
                "runs": len(runs),
                "finished": sum(1 for r in runs if r.is_finished),
                "updated_at": max(r.updated_at for r in runs).isoformat(),
            }
            for thread_id, runs in threads[:limit]
        ]
    }


@router.get("/{thread_id}", summary="Read a thread", response_model=responses.Thread)
async def get_thread(ctx: Ctx, thread_id: str, principal: Viewer) -> dict[str, Any]:
    """The thread's snapshot (turns, usage, cost, guardrail streak) and its runs, oldest first."""
    runs = await index.query_runs(ctx.store, index.RunQuery(limit=ALL, thread_id=thread_id))
    if not runs:
        raise HTTPException(404, f"no thread {thread_id!r}; GET /v1/threads lists them")
    state = await thread_state(ctx.store, thread_id)
    idle = await undriven(ctx, runs)
    return {
        "thread_id": thread_id,
        "turn_count": state.turn_count,
        "usage": usage_dict(state.total_usage),
        "cost_usd": state.accumulated_cost_usd,
        "guardrail_retries": state.guardrail_retries,
        "created_at": state.created_at.isoformat(),
        "runs": [row_dict(r, idle) for r in sorted(runs, key=lambda r: (sortable(r.created_at), r.run_id))],
    }
