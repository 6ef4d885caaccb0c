"""`POST /v1/agents/{agent}/runs`: a start is journaled before it is answered, once per key.

The run's id is the body's `run_id`, else the one an `Idempotency-Key` names, else a fresh
one. A new id is journaled as queued (`server.queueing`) and answered 202 with the run as the
journal has it. An id the journal already holds is answered 200 with that run, if the
request is the one that started it: a reuse with a different request (another input, thread
or principal) is refused with 422 naming the fields that differ, never their values, and the
run is left as it is, as payment APIs do. The comparison is with the digests `run_queued`
recorded, so it holds after a restart and across servers on one store.
"""

from __future__ import annotations

from fastapi import HTTPException

from eudaimon.agent import Agent
from eudaimon.core.errors import ConcurrencyConflict, GuardrailBlocked
from eudaimon.core.events import Event
from eudaimon.server.context import ServerContext
from eudaimon.server.queueing import differing, request_digests, submit


async def start(
    ctx: ServerContext,
    agent: Agent,
    *,
    input: str,
    thread_id: str | None,
    run_id: str,
    named_by: str | None,
    principal: str,
    wait: bool,
) -> int:
    """Journal the run (or find the one the id names) and return the status code to answer."""
    request = {"input": input, "thread_id": thread_id, "principal": principal}
    existing = await ctx.store.load(run_id)
    if not existing:
        try:
            await submit(ctx, agent, input, run_id=run_id, thread_id=thread_id, principal=principal, request=request)
        except GuardrailBlocked as exc:
            raise HTTPException(422, f"the input was refused by an input guardrail: {exc}") from None
        except ConcurrencyConflict:
            existing = await ctx.store.load(run_id)  # the same id, started by a request that came at once
    if existing:
        _same_request(existing[0], agent.name, run_id, named_by, request_digests(request))
    if wait:
        await ctx.lines.settled(run_id)
    return 200 if existing or wait else 202


def _same_request(first: Event, agent: str, run_id: str, named_by: str | None, digests: dict[str, str]) -> None:
    owner = getattr(first.data, "agent", agent)
    if owner != agent:
        raise HTTPException(409, f"run id {run_id!r} is taken by a run of another agent")
    fields = differing(first, digests)
    if not fields:
        return
    names = ", ".join(f"`{f}`" for f in fields)
    if named_by == "run_id":
        what, fresh = f"run_id {run_id!r} was first sent with a different request", "a new run_id"
    else:  # an idempotency key: HTTP's `Idempotency-Key`, MCP's `_meta` key
        what, fresh = f"this {named_by} was first sent with a different request", "a new key"
    raise HTTPException(
        422,
        f"{what} ({names} differ{'s' if len(fields) == 1 else ''}); the run it started is unchanged and nothing "
        f"was started now. Send the same request again to read that run, or use {fresh} for a new request",
    )
