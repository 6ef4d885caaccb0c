"""`GET /v1/dashboard`: per agent and day, runs by status, cost, tokens, durations, error rate.

Computed by the store from its run index in one query (GROUP BY and percentiles over the
index's rows), never by folding runs, so it costs the same whatever the runs hold.
"""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from eudaimon.server import responses
from eudaimon.server.context import Ctx, Viewer
from eudaimon.server.responses import ERRORS
from eudaimon.server.views import day_dict
from eudaimon.stores import index

router = APIRouter(prefix="/v1", tags=["dashboard"], responses=ERRORS)


@router.get("/dashboard", summary="Runs per agent and day", response_model=responses.Dashboard)
async def dashboard(
    ctx: Ctx,
    principal: Viewer,
    days: Annotated[int, Query(ge=1, le=366, description="Today and the days before it, in UTC.")] = 14,
    agent: Annotated[str | None, Query(max_length=500, pattern=r"^[^\x00]*$")] = None,
) -> dict[str, Any]:
    """One row per agent and UTC day that has runs (by creation), oldest day first."""
    since = index.window_start(days, datetime.now(UTC))
    rows = await index.dashboard(ctx.store, since, agent)
    return {"days": [day_dict(row) for row in rows]}
