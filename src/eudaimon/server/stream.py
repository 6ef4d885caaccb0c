"""`GET /v1/runs/{id}/events/stream`: the journal as server-sent events.

One SSE event per journal event, `id: <seq>`, `event: <type>`, the row as `data`; then, live,
each event as it is appended, until the run ends or waits (a last `event: end` says which). A
client that reconnects with `Last-Event-ID: N` (browsers do it by themselves) gets every event
after N exactly once, in order: the stream is read from the store, so this holds across a
restart of the server and for a run another process drives. The text and tool-argument deltas
of a run this process drives come between them as events without an id: they are not journal
facts, and a reconnect neither repeats nor counts them.
"""

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import StreamingResponse

from eudaimon.core.errors import RunNotFound
from eudaimon.core.state import RunState
from eudaimon.runtime.operations import load_state
from eudaimon.server.auth import Principal
from eudaimon.server.context import ServerContext, guards
from eudaimon.server.hub import Item
from eudaimon.server.schemas import SEQ_MAX
from eudaimon.server.views import event_dict
from eudaimon.streaming import (
    Done,
    Error,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from eudaimon.streaming import Usage as UsageEvent

POLL_S = 0.25
"""How often a stream looks at the store when nothing in this process says the run moved."""
KEEPALIVE_S = 15.0

_NAMES: dict[type[StreamEvent], str] = {
    TextDelta: "text_delta",
    ToolCallStart: "tool_call_start",
    ToolCallDelta: "tool_call_delta",
    ToolCallEnd: "tool_call_end",
    ToolResult: "tool_result",
    UsageEvent: "usage",
    Error: "error",
    Done: "done",
}
DELTAS = (TextDelta, ToolCallStart, ToolCallDelta, ToolCallEnd)
"""What a journal stream carries besides the journal: what the model is writing right now."""

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse(data: object, *, event: str | None = None, id: int | None = None) -> str:
    """One server-sent event; `data` as compact JSON (one line, so one `data:` field)."""
    head = (f"id: {id}\n" if id is not None else "") + (f"event: {event}\n" if event else "")
    return f"{head}data: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n"


def stream_event_sse(item: StreamEvent) -> str:
    return sse(dataclasses.asdict(item), event=_NAMES.get(type(item), type(item).__name__))


def _resume_point(last_event_id: str | None, after_seq: int | None) -> int:
    if last_event_id is not None and last_event_id.strip():
        value = last_event_id.strip()
        if not value.lstrip("-").isdigit() or not -1 <= int(value) <= SEQ_MAX:
            raise HTTPException(
                422, f"Last-Event-ID must be the seq of a journal event (an integer), got {value[:40]!r}"
            )
        return int(value)
    return -1 if after_seq is None else after_seq


def router(ctx: ServerContext) -> APIRouter:
    viewer, _ = guards(ctx)
    api = APIRouter(prefix="/v1", tags=["runs"])

    @api.get(
        "/runs/{run_id}/events/stream",
        summary="Follow a run's journal (server-sent events)",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}, "description": "The journal, then live events."}},
    )
    async def stream(
        run_id: str,
        request: Request,
        principal: Annotated[Principal, Depends(viewer)],
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
        after_seq: Annotated[
            int | None, Query(ge=-1, le=SEQ_MAX, description="Start after this seq (Last-Event-ID wins).")
        ] = None,
    ) -> StreamingResponse:
        after = _resume_point(last_event_id, after_seq)
        state: RunState | None = None
        if after >= 0:
            state = await load_state(ctx.store, run_id, after)
            after = state.next_seq - 1  # a client ahead of the journal gets what follows its end
        elif not await ctx.store.load(run_id):
            raise RunNotFound(run_id)
        return StreamingResponse(
            _follow(ctx, request, run_id, after, state), media_type="text/event-stream", headers=SSE_HEADERS
        )

    return api


async def _follow(
    ctx: ServerContext, request: Request, run_id: str, cursor: int, state: RunState | None
) -> AsyncIterator[str]:
    with ctx.hub.subscribe(run_id) as queue:
        yield "retry: 1000\n\n"
        deltas: list[StreamEvent] = []
        quiet = 0.0
        while True:
            for event in await ctx.store.load(run_id, after_seq=cursor):
                if state is None:
                    state = RunState(run_id=run_id)
                state.apply(event)
                cursor = event.seq
                yield sse(event_dict(event), event=event.type, id=event.seq)
            for delta in deltas:
                yield stream_event_sse(delta)
            if state is not None and (state.status.is_terminal or state.status.is_paused):
                yield sse({"status": state.status.value, "seq": cursor}, event="end")
                return
            items = await _gather(queue, POLL_S)
            deltas = [item for item in items if isinstance(item, DELTAS)]
            quiet = 0.0 if items else quiet + POLL_S
            if quiet >= KEEPALIVE_S:
                quiet = 0.0
                yield ": keep-alive\n\n"
            if await request.is_disconnected():
                return


async def _gather(queue: asyncio.Queue[Item], timeout_s: float) -> list[Item]:
    """What arrives within `timeout_s` (at least one item, or none at the timeout), all of it."""
    try:
        first = await asyncio.wait_for(queue.get(), timeout_s)
    except TimeoutError:
        return []
    items = [first]
    while not queue.empty():
        items.append(queue.get_nowait())
    return items
