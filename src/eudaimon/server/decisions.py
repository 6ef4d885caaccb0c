"""`/v1/runs/{id}/approvals|reconcile|resume|fork|cancel`: people deciding for runs.

Each decision is journaled with the principal of the key that sent it as `by`. A decision that
leaves nothing else waiting for a human continues the run here, in the background, when this
server serves its agent; otherwise the run waits for whoever resumes it.
"""

import asyncio
import contextlib
from typing import Any

from fastapi import APIRouter, HTTPException, Response

from eudaimon.core.errors import InvalidArguments
from eudaimon.core.events import ApprovalTimedOut
from eudaimon.core.state import CallStatus, RunState, Status
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.server import responses
from eudaimon.server.context import Ctx, Operator, ServerContext
from eudaimon.server.responses import ERRORS
from eudaimon.server.runs import run_view
from eudaimon.server.schemas import Approval, Cancel, Fork, Reconciliation

CANCEL_WAIT_S = 10.0


async def _check_call(ctx: ServerContext, state: RunState, call_id: str, waiting: CallStatus, what: str) -> None:
    """404 for a call the run never made; 409 for one that is not `waiting` (decided, settled)."""
    progress = state.calls.get(call_id)
    if progress is not None:
        if progress.timed_out:
            raise HTTPException(
                409,
                f"call {call_id!r}: its approval deadline passed with no decision ({progress.note}); "
                "a decision after the deadline is refused",
            )
        if progress.status is not waiting:
            raise HTTPException(409, f"call {call_id!r} is {progress.status.value}, not {what}; a call is decided once")
        return
    events = await ctx.store.load(state.run_id)
    for event in events:
        if isinstance(event.data, ApprovalTimedOut) and event.data.call_id == call_id:
            raise HTTPException(
                409, f"call {call_id!r}: its approval deadline passed ({event.data.note}); a late decision is refused"
            )
    for event in events:
        message = getattr(event.data, "message", None)
        if message is not None and any(c.id == call_id for c in message.tool_calls):
            raise HTTPException(
                409, f"call {call_id!r} of run {state.run_id} was settled earlier; nothing waits for it"
            )
    raise HTTPException(404, f"run {state.run_id} has no call {call_id!r}")


router = APIRouter(prefix="/v1/runs/{run_id}", tags=["decisions"], responses=ERRORS)


def continue_if_ready(ctx: ServerContext, state: RunState) -> bool:
    """Drive the run on when nothing in it waits for a human and its agent is served here."""
    agent = ctx.agents.get(state.agent)
    if agent is None or state.status is not Status.RUNNING:
        return False
    ctx.runner.resume(agent, state.run_id)
    return True


async def answer(ctx: ServerContext, run_id: str, resumed: bool) -> dict[str, Any]:
    """The run as `GET /v1/runs/{id}` shows it, and whether this server drives it on now."""
    view = await run_view(ctx, run_id)
    view["resumed"] = resumed
    return view


@router.post("/approvals/{call_id}", summary="Approve or deny a call", response_model=responses.Run)
async def decide(ctx: Ctx, run_id: str, call_id: str, body: Approval, principal: Operator) -> dict[str, Any]:
    """Record an approval or a denial, by the key's principal, with an optional note; the
    run continues once no other call of it waits for a decision. An approval may carry
    `arguments`, the approver's edit of the call: checked against the tool's schema (422
    naming the problem, nothing journaled), then judged by the agent's approval policy as a
    new call (DENY: 422 with the policy's word, nothing journaled, the call still waits),
    recorded on `approval_decided` beside the arguments they replace, and the call runs
    with them. `approved` is a JSON boolean: `"false"`, `0` or `null` answer 422."""
    state = await load_state(ctx.store, run_id)
    await _check_call(ctx, state, call_id, CallStatus.AWAITING_APPROVAL, "awaiting approval")
    tool, policy = None, None
    if body.arguments is not None:
        if not body.approved:
            raise HTTPException(422, "arguments go with an approval (approved: true), not a denial")
        agent = ctx.agents.get(state.agent)
        tool = agent.tools.get(state.calls[call_id].call.name) if agent is not None else None
        policy = agent.approval_policy if agent is not None else None
    try:
        state = await operations.approve(
            ctx.store,
            run_id,
            call_id,
            body.approved,
            by=principal.name,
            note=body.note,
            arguments=body.arguments,
            tool=tool,
            policy=policy,
        )
    except InvalidArguments as exc:
        raise HTTPException(422, str(exc)) from None
    return await answer(ctx, run_id, continue_if_ready(ctx, state))


@router.post("/reconcile/{call_id}", summary="Settle an unknown outcome", response_model=responses.Run)
async def reconcile(ctx: Ctx, run_id: str, call_id: str, body: Reconciliation, principal: Operator) -> dict[str, Any]:
    """Say what a call whose outcome is unknown did (`output`), or have it run again (`retry`)."""
    state = await load_state(ctx.store, run_id)
    await _check_call(ctx, state, call_id, CallStatus.UNKNOWN, "of unknown outcome")
    state = await operations.reconcile(
        ctx.store, run_id, call_id, output=body.output, retry=body.retry, by=principal.name
    )
    return await answer(ctx, run_id, continue_if_ready(ctx, state))


@router.post("/resume", status_code=202, summary="Resume a run", response_model=responses.Run)
async def resume(ctx: Ctx, run_id: str, principal: Operator) -> dict[str, Any]:
    """Continue a run from its journal, in the background (after a crash, or a decision made
    elsewhere). A run another process drives is taken over once its lease lapses."""
    state = await load_state(ctx.store, run_id)
    if state.status.is_terminal:
        raise HTTPException(409, f"run {run_id} is {state.status.value}; there is nothing to resume")
    waiting = state.awaiting_approval() + state.unknown_outcomes()
    if waiting:
        names = ", ".join(c.id for c in waiting)
        raise HTTPException(409, f"run {run_id} is {state.status.value} (calls {names}); decide for them first")
    ctx.runner.resume(ctx.driver_of(state.agent), run_id)
    return await answer(ctx, run_id, True)


@router.post("/fork", status_code=201, summary="Fork a run at an event", response_model=responses.Run)
async def fork(ctx: Ctx, run_id: str, body: Fork, principal: Operator) -> dict[str, Any]:
    """A new run whose history is this run's up to `at_seq`; driven on here at once when its
    agent is served, unless `start` is false (then `resume` starts it)."""
    child = await operations.fork(ctx.store, run_id, body.at_seq, held=not body.start)
    return await answer(ctx, child, body.start and continue_if_ready(ctx, await load_state(ctx.store, child)))


@router.post("/cancel", summary="Cancel a run", response_model=responses.Run)
async def cancel(
    ctx: Ctx, run_id: str, response: Response, principal: Operator, body: Cancel | None = None
) -> dict[str, Any]:
    """Cancel a run that has not ended, wherever it is driven; `run_cancelled` names the key's
    principal. 200 when it is cancelled already; 202 when its driver (another process) will
    journal it at its next step."""
    reason = (body or Cancel()).reason
    state = await load_state(ctx.store, run_id)
    if state.status.is_terminal:
        raise HTTPException(
            409, f"run {run_id} is {state.status.value}; only a run that has not ended can be cancelled"
        )
    if ctx.runner.cancel(run_id, reason, principal.name):
        task = ctx.runner.task(run_id)
        if task is not None:  # the token stops it at once, tools included
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), CANCEL_WAIT_S)
        return await answer(ctx, run_id, False)
    done = await operations.cancel(ctx.store, run_id, reason=reason, by=principal.name)
    if done is None:
        response.status_code = 202
        view = await answer(ctx, run_id, False)
        view["cancel_requested"] = True
        return view
    return await answer(ctx, run_id, False)
