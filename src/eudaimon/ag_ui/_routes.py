"""`POST /v1/agents/{agent}/ag-ui`: an AG-UI `RunAgentInput` in, the run's AG-UI events out (SSE).

AG-UI's `threadId` is the thread, its `runId` the run. A new `runId` starts a run whose input
is the last user message (earlier turns are the thread's memory): it is journaled as queued
(`server.queueing`, with who asked) before the stream answers, and begins in its thread's turn,
after a restart too. The stream opens (RUN_STARTED, a snapshot with status `queued`) on that
first event, as AG-UI wants RUN_STARTED before anything else. A `runId` that names a run
already (the client reconnected, or the page was reloaded) starts nothing: the stream replays the
run from its journal and follows it on. The same `runId` with `resume` entries answers the
interrupts a paused run ended with (`payload: {"approved": bool, "note"?}` per waiting call),
then streams the run from there. Encoding is `ag-ui-protocol`'s `EventEncoder`.
"""

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from ag_ui.core import BaseEvent, RunAgentInput, StateDeltaEvent, UserMessage
from ag_ui.encoder import EventEncoder
from fastapi import APIRouter, FastAPI, Header, HTTPException
from fastapi.responses import StreamingResponse

from eudaimon.ag_ui._events import delta, events_of, finished, started, view
from eudaimon.core.errors import ConcurrencyConflict, EudaimonError, GuardrailBlocked
from eudaimon.core.state import RunState, Status
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server.auth import Principal
from eudaimon.server.context import Ctx, ServerContext, Viewer
from eudaimon.server.following import journal_batches
from eudaimon.server.ids import id_problem
from eudaimon.server.protocols import register_protocol
from eudaimon.server.queueing import submit
from eudaimon.server.responses import ERRORS
from eudaimon.server.schemas import RUN_ID_PATTERN

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _last_user_text(body: RunAgentInput) -> str:
    for message in reversed(body.messages):
        inner = getattr(message, "root", message)
        if isinstance(inner, UserMessage):
            content = inner.content
            if isinstance(content, str):
                return content
            return "\n".join(str(getattr(part, "text", "")) for part in content if getattr(part, "text", None))
    raise HTTPException(422, "RunAgentInput.messages has no user message: add the message the run should answer")


router = APIRouter(prefix="/v1", tags=["ag-ui"], responses=ERRORS)


@router.post(
    "/agents/{agent}/ag-ui",
    summary="Run an agent for an AG-UI client (server-sent events)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The run's AG-UI events."}},
)
async def ag_ui_run(
    ctx: Ctx,
    agent: str,
    body: RunAgentInput,
    principal: Viewer,
    accept: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Start the run `runId` (or find it, or resume it with `resume` answers) and stream it.
    Replaying a run needs any key; starting or resuming one an operator's."""
    driver = ctx.agent(agent)
    if not re.fullmatch(RUN_ID_PATTERN, body.run_id):
        raise HTTPException(422, f"runId must match {RUN_ID_PATTERN} (it becomes the eudaimon run id)")
    problem = id_problem("threadId", body.thread_id)
    if problem is not None:
        raise HTTPException(422, f"{problem} (it becomes the eudaimon thread id)")
    existing = await ctx.store.load(body.run_id)
    if (not existing or body.resume) and not principal.may_operate:
        raise HTTPException(
            403, f"{principal.name} is a {principal.role.value}; starting or resuming a run needs an operator key"
        )
    after: RunState | None = None
    if not existing:
        text = _last_user_text(body)
        request = {"input": text, "thread_id": body.thread_id, "principal": principal.name}
        try:
            await submit(
                ctx,
                driver,
                text,
                run_id=body.run_id,
                thread_id=body.thread_id,
                principal=principal.name,
                request=request,
            )
        except GuardrailBlocked as exc:
            raise HTTPException(422, f"the input was refused by an input guardrail: {exc}") from None
        except ConcurrencyConflict:  # the same runId, posted again at once: follow that run
            existing = await ctx.store.load(body.run_id)
    if existing:
        state = RunState.from_events(existing)
        assert state is not None
        if state.agent != agent:
            raise HTTPException(409, f"run id {body.run_id!r} is taken by a run of another agent")
        if state.thread_id != body.thread_id:
            raise HTTPException(
                409, f"run {body.run_id} is in thread {state.thread_id!r}; send that threadId to follow it"
            )
        if body.resume:
            after = await _resume(ctx, state, body, principal)
        elif state.status is Status.QUEUED:  # after a restart, before the recovery sweep got to it
            ctx.lines.poke(agent, body.run_id, state.thread_id)
        elif state.status is Status.RUNNING and not ctx.runner.is_driving(body.run_id):
            ctx.runner.resume(driver, body.run_id, wait=False)
    encoder = EventEncoder(accept=accept or "text/event-stream")
    return StreamingResponse(
        _encoded(encoder, _stream(ctx, body, after)),
        media_type=encoder.get_content_type(),
        headers=SSE_HEADERS,
    )


async def _resume(ctx: ServerContext, state: RunState, body: RunAgentInput, principal: Principal) -> RunState:
    """Apply each `resume` entry as the decision of the call it names; continue the run."""
    if state.status is not Status.AWAITING_APPROVAL:
        raise HTTPException(409, f"run {state.run_id} is {state.status.value}; nothing waits for a resume answer")
    waiting = {c.id for c in state.awaiting_approval()}
    before = state
    answers = [(entry, _decision(entry)) for entry in body.resume or ()]  # all checked before any is recorded
    for entry, _ in answers:
        if entry.interrupt_id not in waiting:
            raise HTTPException(409, f"no call {entry.interrupt_id!r} of run {state.run_id} waits for approval")
    for entry, (approved, note) in answers:
        try:
            state = await operations.approve(
                ctx.store,
                state.run_id,
                entry.interrupt_id,
                approved,
                by=principal.name,
                note=note,
            )
        except EudaimonError as exc:  # decided meanwhile by someone else, say
            raise HTTPException(409, str(exc)) from exc
    if state.status is Status.RUNNING:
        agent = ctx.agents.get(state.agent)
        if agent is not None:
            ctx.runner.resume(agent, state.run_id)
    return before


def _decision(entry: Any) -> tuple[bool, str | None]:
    """A `resume` entry as a decision: `status: "cancelled"` denies; `"resolved"` carries
    `payload: {"approved": true|false, "note"?: "…"}`, a JSON boolean. Anything else is refused
    (422 saying what to send): the string "false" is not read for its truth."""
    payload: Any = entry.payload
    if entry.status == "cancelled":
        note = payload.get("note") if isinstance(payload, dict) else None
        return False, None if note is None else str(note)
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        got = payload.get("approved") if isinstance(payload, dict) else payload
        raise HTTPException(
            422,
            f"resume entry {str(entry.interrupt_id)[:80]!r}: payload.approved must be a JSON boolean, got "
            f'{type(got).__name__} {str(got)[:40]!r}; send {{"approved": true}} or {{"approved": false}} '
            '(or status "cancelled" to deny); nothing was recorded',
        )
    note = payload.get("note")
    return payload["approved"], None if note is None else str(note)


async def _stream(ctx: ServerContext, body: RunAgentInput, after: RunState | None) -> AsyncIterator[BaseEvent]:
    """RUN_STARTED and a state snapshot (on the journal's first event, `run_queued` for a run
    started over HTTP), the journal's events as AG-UI events from `after` on (from the start
    when None), a state delta after each event that changed the state, and the end.

    The state is folded here event by event (not per batch the store happened to return), so
    a replay gives exactly the events the live stream gave."""
    thread_id, run_id = body.thread_id, body.run_id
    mine: RunState | None = None
    shown: dict[str, Any] = {}
    if after is not None:
        mine = await load_state(ctx.store, run_id, after.next_seq - 1)
        for event in started(thread_id, run_id, mine):
            yield event
        shown = view(mine)
    async for _, events in journal_batches(ctx, run_id, after):
        for journal_event in events:
            opening = mine is None
            mine = mine if mine is not None else RunState(run_id=run_id)
            mine.apply(journal_event)
            if opening:
                for event in started(thread_id, run_id, mine):
                    yield event
                shown = view(mine)
                continue
            for event in events_of(journal_event):
                yield event
            now = view(mine)
            patch = delta(shown, now)
            if patch:
                yield StateDeltaEvent(delta=patch)
                shown = now
    if mine is None:
        mine = await load_state(ctx.store, run_id)
    yield finished(thread_id, run_id, mine)


async def _encoded(encoder: EventEncoder, events: AsyncIterator[BaseEvent]) -> AsyncIterator[str]:
    async for event in events:
        yield encoder.encode(event)
        await asyncio.sleep(0)


def install(app: FastAPI, ctx: ServerContext) -> None:
    """Answer AG-UI runs at /v1/agents/AGENT/ag-ui for the agents `ctx` serves."""
    app.include_router(router)


register_protocol("ag_ui", install)
