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
import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query
from fastapi.responses import StreamingResponse

from eudaimon.core.errors import RunNotFound
from eudaimon.core.events import Event
from eudaimon.core.state import RunState
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server.context import Ctx, ServerContext, Viewer
from eudaimon.server.hub import Fed, event_sse, sse
from eudaimon.server.responses import ERRORS
from eudaimon.server.schemas import SEQ_MAX

KEEPALIVE_S = 15.0
WAIT_S = 1.0
"""How long a stream waits for its feed before it counts towards a keep-alive comment."""
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_INTEGER = re.compile(r"-?[0-9]{1,20}")


def _resume_point(last_event_id: str | None, after_seq: int | None) -> int:
    if last_event_id is not None and last_event_id.strip():
        value = last_event_id.strip()
        if not _INTEGER.fullmatch(value) or not -1 <= int(value) <= SEQ_MAX:  # not isdigit(): "²", "--1"
            raise HTTPException(
                422, f"Last-Event-ID must be the seq of a journal event (an integer), got {value[:40]!r}"
            )
        return int(value)
    return -1 if after_seq is None else after_seq


router = APIRouter(prefix="/v1", tags=["runs"], responses=ERRORS)


@router.get(
    "/runs/{run_id}/events/stream",
    summary="Follow a run's journal (server-sent events)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The journal, then live events."}},
)
async def stream(
    ctx: Ctx,
    run_id: str,
    principal: Viewer,
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
    return StreamingResponse(_follow(ctx, run_id, after, state), media_type="text/event-stream", headers=SSE_HEADERS)


async def _follow(ctx: ServerContext, run_id: str, cursor: int, state: RunState | None) -> AsyncIterator[str]:
    """The journal after `cursor`, then live: first what the store has now, then what the run's
    shared feed brings (skipping what was sent; a gap, which the feed never leaves, is read
    from the store). Everything that arrives together goes out in one write."""
    with ctx.hub.follow(run_id, cursor) as queue:
        out = ["retry: 1000\n\n"]
        backlog: list[Fed] = [Fed(event_sse(e), e) for e in await ctx.store.load(run_id, after_seq=cursor)]
        quiet = 0.0
        while True:
            for item in backlog:
                event = item.event
                if event is None:
                    out.append(item.text)
                    continue
                if event.seq <= cursor:
                    continue
                if event.seq > cursor + 1:  # never expected: fill the gap from the journal itself
                    for missing in await ctx.store.load(run_id, after_seq=cursor):
                        if missing.seq >= event.seq:
                            break
                        state, cursor = _apply(state, missing), missing.seq
                        out.append(event_sse(missing))
                state, cursor = _apply(state, event), event.seq
                out.append(item.text)
            if out:
                yield "".join(out)
                out = []
            if state is not None and (state.status.is_terminal or state.status.is_paused):
                yield sse({"status": state.status.value, "seq": cursor}, event="end")
                return
            backlog = await _gather(queue, WAIT_S)
            quiet = 0.0 if backlog else quiet + WAIT_S
            if quiet >= KEEPALIVE_S:
                quiet = 0.0
                out.append(": keep-alive\n\n")
            # A client that goes away needs no check here: the response's disconnect listener
            # cancels this generator, and leaving `follow` drops its queue from the feed.


def _apply(state: RunState | None, event: Event) -> RunState:
    if state is None:
        state = RunState(run_id=event.run_id)
    state.apply(event)
    return state


async def _gather(queue: asyncio.Queue[Fed], timeout_s: float) -> list[Fed]:
    """What arrives within `timeout_s` (at least one item, or none at the timeout), all of it."""
    try:
        first = await asyncio.wait_for(queue.get(), timeout_s)
    except TimeoutError:
        return []
    items = [first]
    while not queue.empty():
        items.append(queue.get_nowait())
    return items
