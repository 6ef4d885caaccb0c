"""Starts over HTTP: journaled before they are answered, then run in turn, one per thread.

A start is answered only once its run is in the journal: its `run_queued` (agent, input,
thread, who asked, a digest of each request field) is appended at seq 0, and the answer is
the run as the journal has it. What happens next is the journal's business too: each thread
with queued runs of the agents served here has one drainer in this process (`server.lines`),
which starts the thread's earliest queued run (`Agent.resume` starts a queued run, holding the
thread's lease), waits for it to end or pause, and goes on to the next. A server that restarts finds
the queued runs in the journal (the recovery sweep pokes their threads), so a run answered
2xx is never lost, and several servers on one PostgreSQL take turns by the thread's lease.

A start without `thread_id` gets a thread of its own (`{agent}:{run_id}`), so HTTP clients
never read each other's history, and such runs run side by side; an agent served with
`shared_threads` keeps the agent's one default conversation instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from eudaimon.agent import Agent
from eudaimon.agent._input import check_deps, check_input
from eudaimon.core.events import Event, RunQueued
from eudaimon.core.run_index import own_thread
from eudaimon.core.state import RunState
from eudaimon.extensions.guardrails import run_input_guardrails
from eudaimon.runtime.process.queued import enqueue
from eudaimon.server.context import ServerContext
from eudaimon.tools import ToolContext


def thread_for(
    agent: Agent, run_id: str, thread_id: str | None, shared: Iterable[str]
) -> tuple[str | None, str | None]:
    """The run's thread and the thread as memory knows it, for a start asking for `thread_id`."""
    if thread_id is not None:
        return thread_id, thread_id
    if agent.name in shared:
        return agent.default_thread, None  # the agent's one conversation, as `prompt()` without a thread
    own = own_thread(agent.name, run_id)
    return own, own


def request_digests(fields: Mapping[str, Any]) -> dict[str, str]:
    """A digest of each field of a request: enough to tell a reuse of its key with another
    request, without keeping the values a second time."""
    return {
        name: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest() for name, value in fields.items()
    }


def differing(first: Event, digests: Mapping[str, str]) -> list[str]:
    """The fields in which a request differs from the one that started the run `first` begins.

    Compared are the fields the journal recorded digests for; a run started without them (by
    an older server, or not over HTTP) differs in nothing that can be told."""
    recorded = first.data.request if isinstance(first.data, RunQueued) else {}
    return sorted(name for name, digest in digests.items() if name in recorded and recorded[name] != digest)


async def submit(
    ctx: ServerContext,
    agent: Agent,
    input: str,
    *,
    run_id: str,
    thread_id: str | None,
    principal: str | None,
    request: Mapping[str, Any] | None = None,
    start: bool = True,
) -> RunState:
    """Journal a new run of `agent` as queued and have it started in its turn (unless not
    `start`: the caller pokes `ctx.lines` itself, or leaves the run to the recovery sweep).

    Raises:
        GuardrailBlocked: an input guardrail refused the input; nothing was journaled.
        ConcurrencyConflict: `run_id` is taken; nothing was journaled.
    """
    check_input(input)
    check_deps(agent.name, agent.deps_type, None, "a start over HTTP")
    text = input
    if agent.input_guardrails:
        text = await run_input_guardrails(agent.input_guardrails, input, ToolContext(run_id, "", "", 0, None, 0))
    thread, memory_thread = thread_for(agent, run_id, thread_id, ctx.shared_threads)
    queued = RunQueued(
        agent=agent.name,
        input=text,
        thread_id=thread,
        memory_thread=memory_thread,
        principal=principal,
        request=request_digests(request) if request is not None else {},
    )
    state = await enqueue(ctx.store, run_id, queued)
    if start:
        ctx.lines.poke(agent.name, run_id, thread)
    return state
