"""The Daimon-compatible endpoints: `POST /prompt`, `POST /prompt/stream`, `/health`, `/ready`.

A prompt is a durable run like any other (it shows in `/v1/runs` and the inspector); these
answer in the shape of `AgentResponse` and of the stream events of `prompt_stream`.
"""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse, StreamingResponse

from eudaimon.agent import Agent
from eudaimon.core.errors import GuardrailBlocked
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.clock import new_run_id
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server import queueing, responses
from eudaimon.server.auth import Principal
from eudaimon.server.context import Ctx, Operator, ServerContext
from eudaimon.server.hub import stream_event_sse
from eudaimon.server.schemas import Prompt
from eudaimon.server.stream import SSE_HEADERS
from eudaimon.server.views import message_dict, usage_dict
from eudaimon.streaming import Done


def response_dict(state: RunState) -> dict[str, Any]:
    """What `AgentResponse` says of a run, as JSON."""
    answer = state.output if state.output is not None else None
    if answer is None:
        answers = [m.content for m in state.messages if m.role.value == "assistant" and m.content]
        answer = answers[-1] if answers else ""
    return {
        "run_id": state.run_id,
        "status": state.status.value,
        "text": answer,
        "error": state.error,
        "iterations": state.steps,
        "usage": usage_dict(state.usage),
        "cost": state.cost_usd,
        "messages": [message_dict(m) for m in state.messages],
        "pending_approvals": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in state.awaiting_approval()
        ],
    }


router = APIRouter(tags=["daimon"])


def pick(ctx: ServerContext, body: Prompt) -> Agent:
    """The agent a prompt names, or the one agent served; 422 naming them otherwise."""
    if body.agent is not None:
        return ctx.agent(body.agent)
    if len(ctx.agents) == 1:
        return next(iter(ctx.agents.values()))
    raise HTTPException(422, f"this server serves several agents; name one in `agent`: {', '.join(sorted(ctx.agents))}")


@router.post(
    "/prompt",
    summary="Prompt an agent and wait for its answer",
    response_model=responses.AgentResponse,
    responses=responses.ERRORS,
)
async def prompt(ctx: Ctx, body: Prompt, principal: Operator) -> dict[str, Any]:
    """Run the agent until it answers, fails or waits for a human; answer like `AgentResponse`."""
    run_id = new_run_id()
    await _submit(ctx, pick(ctx, body), body, run_id, principal)
    await ctx.lines.settled(run_id)
    return response_dict(await load_state(ctx.store, run_id))


@router.post(
    "/prompt/stream",
    summary="Prompt an agent, streaming what it does",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "prompt_stream's events."}},
)
async def prompt_stream(ctx: Ctx, body: Prompt, principal: Operator) -> StreamingResponse:
    """The events of `prompt_stream` as server-sent events (`text_delta`, `tool_call_start`,
    `tool_result`, `usage`, `error`, `done`). The run goes on if the client leaves."""
    agent = pick(ctx, body)
    run_id = new_run_id()
    # Journaled before the 200 (a refused input is a 422), started once the stream listens:
    # a stream that never starts leaves the run to the recovery sweep.
    queued = await _submit(ctx, agent, body, run_id, principal, start=False)

    async def events() -> AsyncIterator[str]:
        with ctx.hub.subscribe(run_id) as queue:
            ctx.lines.poke(agent.name, run_id, queued.thread_id)
            task = asyncio.ensure_future(ctx.lines.settled(run_id))
            try:
                while True:
                    getter = asyncio.ensure_future(queue.get())
                    await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                    if not getter.done():
                        getter.cancel()
                        return
                    item = getter.result()
                    if item is not None:
                        yield stream_event_sse(item)
                        if isinstance(item, Done):
                            return
            finally:
                task.cancel()

    return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)


@router.get("/health", summary="Liveness", tags=["service"], response_model=responses.Health)
async def health(ctx: Ctx) -> dict[str, Any]:
    """The process answers; how many runs it drives and how many streams are open."""
    return {"status": "ok", "driving": ctx.runner.driving_count, "streams": ctx.hub.subscriber_count}


@router.get(
    "/ready", summary="Readiness", tags=["service"], responses={503: {"description": "The store does not answer."}}
)
async def ready(ctx: Ctx) -> JSONResponse:
    """Ready when the store answers a read."""
    try:
        await ctx.store.list_runs(limit=1)
    except Exception as exc:
        return JSONResponse(
            {"status": "unavailable", "detail": f"the store does not answer: {type(exc).__name__}"}, 503
        )
    return JSONResponse({"status": "ready", "agents": sorted(ctx.agents)})


async def _submit(
    ctx: ServerContext, agent: Agent, body: Prompt, run_id: str, principal: Principal, *, start: bool = True
) -> RunState:
    """Journal the prompt's run (a thread of its own unless it names one, or its agent is
    served as one shared conversation) before anything is answered."""
    try:
        return await queueing.submit(
            ctx, agent, body.input, run_id=run_id, thread_id=body.thread_id, principal=principal.name, start=start
        )
    except GuardrailBlocked as exc:
        raise HTTPException(422, f"the input was refused by an input guardrail: {exc}") from None
