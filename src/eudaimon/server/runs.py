"""`/v1/agents/{agent}/runs` and `/v1/runs…`: start runs, list them, read one, its events, its state."""

import hashlib
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Header, HTTPException, Query, Response

from eudaimon.core.errors import RunNotFound
from eudaimon.core.run_index import STATUSES, RunRow
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.loop.clock import new_run_id
from eudaimon.runtime.process.drivers import driverless_runs, run_drivers
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server import responses, starting
from eudaimon.server.auth import Principal
from eudaimon.server.context import Ctx, Operator, ServerContext, Viewer
from eudaimon.server.responses import ERRORS
from eudaimon.server.schemas import SEQ_MAX, StartRun
from eudaimon.server.views import event_dict, row_dict, run_dict, state_dict
from eudaimon.stores import index

ALL = 1_000_000_000


async def run_view(ctx: ServerContext, run_id: str) -> dict[str, Any]:
    """The run as `GET /v1/runs/{id}` shows it; `RunNotFound` (404) when there is none."""
    events = await ctx.store.load(run_id)
    state = RunState.from_events(events)
    if state is None:
        raise RunNotFound(run_id)
    view = run_dict(state, events)
    view["driven_here"] = ctx.runner.is_driving(run_id)
    view["driven_by_engine"] = bool(state.engine)
    if state.status is Status.RUNNING and not state.engine:
        lease = ((await run_drivers(ctx.store, [run_id])) or {}).get(run_id)
        view["driver"] = None if lease is None else {"owner": lease.owner, "lease_left_s": round(lease.expires_in_s, 1)}
    return view


async def undriven(ctx: ServerContext, rows: list[RunRow]) -> frozenset[str]:
    """The running runs among `rows` that no process drives now, as listings mark them; a run
    this server is about to drive (its lease not taken yet) is not one of them."""
    idle = await driverless_runs(ctx.store, rows)
    return frozenset(run_id for run_id in idle if not ctx.runner.is_driving(run_id))


if TYPE_CHECKING:
    IndexStatus = str
else:  # the statuses of `core.run_index.STATUSES`, offered in the schema as an enum of strings
    IndexStatus = Literal[STATUSES]


def listing_query(
    *,
    limit: int,
    statuses: tuple[str, ...] = (),
    agent: str | None = None,
    thread_id: str | None = None,
    q: str | None = None,
    since: str | None = None,
    until: str | None = None,
    cursor: str | None = None,
    replay_of: str | None = None,
    replays: bool = False,
    version: str | None = None,
) -> index.RunQuery:
    """The index query of a listing's parameters; a bad cursor or date is a 422 saying what to pass."""
    for name, value in (("agent", agent), ("thread_id", thread_id), ("q", q), ("cursor", cursor)):
        if value is not None and "\x00" in value:
            raise HTTPException(422, f"{name} holds a NUL character; remove it")
    try:
        after = None if cursor is None else index.Cursor.decode(cursor)
    except index.BadCursor:
        raise HTTPException(
            422, "cursor is not one this server gave; pass `next_cursor` from the previous page, or leave it out"
        ) from None
    try:
        since_at = index.filter_bound("since", since, end=False)
        until_at = index.filter_bound("until", until, end=True)
    except index.BadBound as exc:
        raise HTTPException(422, str(exc)) from None
    return index.RunQuery(
        limit=limit,
        statuses=statuses,
        agent=agent,
        thread_id=thread_id,
        q=q or None,
        since=since_at,
        until=until_at,
        cursor=after,
        replay_of=replay_of,
        replays=replays,
        version=version,
    )


def idempotent_run_id(principal: Principal, agent: str, key: str) -> str:
    """The run an `Idempotency-Key` names: the same key (from the same principal, for the same
    agent) always names the same run, in any process."""
    return "run_" + hashlib.sha256(f"{principal.name}\0{agent}\0{key}".encode()).hexdigest()[:32]


router = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)


@router.post(
    "/agents/{agent}/runs",
    status_code=202,
    summary="Start a run",
    response_model=responses.Run,
)
async def start_run(
    ctx: Ctx,
    agent: str,
    body: StartRun,
    response: Response,
    principal: Operator,
    wait: Annotated[bool, Query(description="Answer when the run ends or waits, not at once.")] = False,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)] = None,
) -> dict[str, Any]:
    """Start a run of `agent`, driven by this server in the background (202), or wait for it
    to end or pause with `?wait=true` (200). The run is journaled before the answer: while
    its thread is busy its status is `queued`, and it starts in its turn, after a restart too.
    Without `thread_id` the run gets a thread of its own (`thread_id` in the answer).
    The same `run_id` or `Idempotency-Key` sent again with the same request answers with
    the run it started (200) and never starts a second one; with a different request, 422."""
    driver = ctx.agent(agent)
    named_by: str | None = None
    if body.run_id is not None:
        run_id, named_by = body.run_id, "run_id"
    elif idempotency_key:
        run_id, named_by = idempotent_run_id(principal, agent, idempotency_key), "Idempotency-Key"
    else:
        run_id = new_run_id()
    response.status_code = await starting.start(
        ctx,
        driver,
        input=body.input,
        thread_id=body.thread_id,
        run_id=run_id,
        named_by=named_by,
        principal=principal.name,
        wait=wait,
    )
    return await run_view(ctx, run_id)


@router.get("/runs", summary="List runs", response_model=responses.RunPage)
async def list_runs(
    ctx: Ctx,
    principal: Viewer,
    status: Annotated[
        list[IndexStatus] | None, Query(description="Only runs in this status; repeat it for runs in any of several.")
    ] = None,
    agent: Annotated[str | None, Query(max_length=500)] = None,
    thread_id: Annotated[str | None, Query(max_length=500)] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=500,
            description="Case-insensitive text in the input, output, tool names, run, thread or call ids.",
        ),
    ] = None,
    since: Annotated[str | None, Query(description="ISO 8601 date or datetime: created at or after.")] = None,
    until: Annotated[
        str | None, Query(description="ISO 8601 datetime (created before it) or date (created on it or before).")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
    replay_of: Annotated[
        str | None, Query(max_length=500, description="Only the replays of this run (`agent.replay`).")
    ] = None,
    replays: Annotated[bool, Query(description="Include replays, which listings leave out.")] = False,
    version: Annotated[str | None, Query(max_length=500, description="Only runs of this agent version.")] = None,
) -> dict[str, Any]:
    """Runs, most recently updated first, from the store's index; pass `next_cursor` back as
    `cursor` for the next page. A run updated while you page moves to the front: a pass never
    shows it twice, and one not reached yet shows again only from the first page."""
    query = listing_query(
        limit=limit + 1,
        statuses=tuple(dict.fromkeys(status or ())),
        agent=agent,
        thread_id=thread_id,
        q=q,
        since=since,
        until=until,
        cursor=cursor,
        replay_of=replay_of,
        replays=replays,
        version=version,
    )
    rows = await index.query_runs(ctx.store, query)
    page = rows[:limit]
    more = len(rows) > limit
    idle = await undriven(ctx, page)
    return {
        "runs": [row_dict(row, idle) for row in page],
        "next_cursor": index.Cursor.after(page[-1]).encode() if more and page else None,
    }


@router.get("/runs/{run_id}", summary="Read a run", response_model=responses.Run)
async def get_run(ctx: Ctx, run_id: str, principal: Viewer) -> dict[str, Any]:
    """Status, steps, usage and cost (per step too), the conversation, pending approvals,
    unknown outcomes, and who decided what."""
    return await run_view(ctx, run_id)


@router.get("/runs/{run_id}/events", summary="Read a run's events", response_model=responses.EventPage)
async def get_events(
    ctx: Ctx,
    run_id: str,
    principal: Viewer,
    after_seq: Annotated[int, Query(ge=-1, le=SEQ_MAX)] = -1,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> dict[str, Any]:
    """The journal rows after `after_seq`, in order, at most `limit` of them."""
    events = await ctx.store.load(run_id, after_seq=after_seq)
    if not events and (after_seq < 0 or not await ctx.store.load(run_id)):
        raise RunNotFound(run_id)
    shown = events[:limit]
    return {"events": [event_dict(e) for e in shown], "more": len(events) > limit}


@router.get("/runs/{run_id}/state", summary="Read a run's state at an event", response_model=responses.State)
async def get_state(
    ctx: Ctx,
    run_id: str,
    principal: Viewer,
    at_seq: Annotated[
        int | None, Query(ge=0, le=SEQ_MAX, description="The event after which to show the state.")
    ] = None,
) -> dict[str, Any]:
    """The folded state after event `at_seq` (the latest when left out): time travel."""
    return state_dict(await load_state(ctx.store, run_id, at_seq))
