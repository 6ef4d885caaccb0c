"""Starts over HTTP: journaled before they are answered, then run in turn, one per thread.

A start is answered only once its run is in the journal: its `run_queued` (agent, input,
thread, who asked, a digest of each request field) is appended at seq 0, and the answer is
the run as the journal has it. What happens next is the journal's business too: each thread
with queued runs of the agents served here has one drainer in this process, which starts the
thread's earliest queued run (`Agent.resume` starts a queued run, holding the thread's
lease), waits for it to end or pause, and goes on to the next. A server that restarts finds
the queued runs in the journal (the recovery sweep pokes their threads), so a run answered
2xx is never lost, and several servers on one PostgreSQL take turns by the thread's lease.

A start without `thread_id` gets a thread of its own (`{agent}:{run_id}`), so HTTP clients
never read each other's history, and such runs run side by side; an agent served with
`shared_threads` keeps the agent's one default conversation instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from eudaimon.agent import Agent
from eudaimon.agent._input import check_deps, check_input
from eudaimon.core.events import Event, RunQueued
from eudaimon.core.state import RunState, Status
from eudaimon.extensions.guardrails import run_input_guardrails
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.queued import QueuedBehind, enqueue, queued_on
from eudaimon.tools import ToolContext

if TYPE_CHECKING:
    from eudaimon.server.context import ServerContext

logger = logging.getLogger("eudaimon.server")

POLL_S = 0.5
"""How often a drainer looks again at a thread whose turn is held elsewhere (another process,
or a run of an agent this server does not serve)."""


def own_thread(agent: str, run_id: str) -> str:
    """The thread of a start that named none: its own."""
    return f"{agent}:{run_id}"


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


class Lines:
    """The drainers of the threads with queued runs, one per thread in this process."""

    def __init__(self, ctx: ServerContext) -> None:
        self._ctx = ctx
        self._drainers: dict[str, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        self._begun: dict[str, asyncio.Future[None]] = {}

    def poke(self, agent: str, run_id: str, thread_id: str | None) -> None:
        """A queued run of `agent` is in the journal: have it started in its turn."""
        served = self._ctx.agents.get(agent)
        if served is None:
            return
        if thread_id is None:  # no thread, no turn to wait for
            self._began(run_id, self._ctx.runner.resume(served, run_id))
            return
        self._dirty.add(thread_id)
        if thread_id not in self._drainers:
            self._drainers[thread_id] = asyncio.create_task(self._drain(thread_id), name=f"eudaimon thread {thread_id}")

    async def settled(self, run_id: str) -> None:
        """Wait until the run has ended or paused, wherever it is driven: here (its task), or by
        another server or worker on the store (read every `POLL_S`). A task here may also end
        without the run (its lease was another's): the journal says which."""
        while True:
            task = self._ctx.runner.task(run_id)
            if task is not None:
                await asyncio.shield(task)
            status = (await load_state(self._ctx.store, run_id)).status
            if status is Status.QUEUED:
                begun = self._begun.setdefault(run_id, asyncio.get_running_loop().create_future())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(begun), POLL_S)
            elif status is Status.RUNNING:
                await asyncio.sleep(POLL_S)
            else:
                return

    async def _drain(self, thread_id: str) -> None:
        ctx = self._ctx
        try:
            while True:
                self._dirty.discard(thread_id)
                head = next(iter(await queued_on(ctx.store, thread_id)), None)
                if head is None:
                    if thread_id in self._dirty:
                        continue  # poked while it looked
                    return
                agent = ctx.agents.get(head.agent)
                if agent is None:  # another server's: it is started there
                    await asyncio.sleep(POLL_S)
                    continue
                task = ctx.runner.resume(agent, head.run_id)
                self._began(head.run_id, task)
                error = await asyncio.shield(task)
                if isinstance(error, QueuedBehind):
                    await self._unblock(error.ahead)
                elif error is not None:
                    logger.warning("queued run %s could not start: %s; trying again", head.run_id, error)
                    await asyncio.sleep(POLL_S)
        except Exception:
            logger.exception("the queue of thread %s stopped; the recovery sweep restarts it", thread_id)
        finally:
            if self._drainers.get(thread_id) is asyncio.current_task():
                del self._drainers[thread_id]

    async def _unblock(self, run_id: str) -> None:
        """Help the run a queue waits for on its way (a run left running by a crash is resumed
        here if its agent is served), else give it time."""
        state = await load_state(self._ctx.store, run_id)
        agent = self._ctx.agents.get(state.agent)
        if agent is not None and state.status is Status.RUNNING:
            error = await asyncio.shield(self._ctx.runner.resume(agent, run_id, wait=False))
            if error is None:
                return
        await asyncio.sleep(POLL_S)

    def _began(self, run_id: str, task: asyncio.Task[Exception | None]) -> None:
        begun = self._begun.pop(run_id, None)
        if begun is not None and not begun.done():
            begun.set_result(None)

    async def aclose(self) -> None:
        """Stop the drainers; the runs they wait for stay queued in the journal."""
        drainers = list(self._drainers.values())
        for drainer in drainers:
            drainer.cancel()
        await asyncio.gather(*drainers, return_exceptions=True)
