"""The queues of runs journaled and not started yet: one drainer per thread in this process.

A drainer starts its thread's earliest queued run (`Agent.resume` starts a queued run, holding
the thread's lease), waits for it to end or pause, and goes on to the next; a thread whose turn
is held elsewhere (another server, or a run of an agent not served here) is looked at again
every `POLL_S`. How runs come to be queued is `server.queueing`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from eudaimon.agent import Agent
from eudaimon.core.state import Status
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.queued import QueuedBehind, queued_on
from eudaimon.server.driving import Runner
from eudaimon.stores.base import EventStore

logger = logging.getLogger("eudaimon.server")

POLL_S = 0.5
"""How often a drainer looks again at a thread whose turn is held elsewhere (another process,
or a run of an agent this server does not serve)."""


class Lines:
    """The drainers of the threads with queued runs, one per thread in this process."""

    def __init__(self, agents: Mapping[str, Agent], store: EventStore, runner: Runner) -> None:
        self._agents = agents
        self._store = store
        self._runner = runner
        self._drainers: dict[str, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        self._begun: dict[str, asyncio.Future[None]] = {}

    def poke(self, agent: str, run_id: str, thread_id: str | None) -> None:
        """A queued run of `agent` is in the journal: have it started in its turn."""
        served = self._agents.get(agent)
        if served is None:
            return
        if thread_id is None:  # no thread, no turn to wait for
            self._began(run_id, self._runner.resume(served, run_id))
            return
        self._dirty.add(thread_id)
        if thread_id not in self._drainers:
            self._drainers[thread_id] = asyncio.create_task(self._drain(thread_id), name=f"eudaimon thread {thread_id}")

    async def settled(self, run_id: str) -> None:
        """Wait until the run has ended or paused, wherever it is driven: here (its task), or by
        another server or worker on the store (read every `POLL_S`). A task here may also end
        without the run (its lease was another's): the journal says which."""
        while True:
            task = self._runner.task(run_id)
            if task is not None:
                await asyncio.shield(task)
            status = (await load_state(self._store, run_id)).status
            if status is Status.QUEUED:
                begun = self._begun.setdefault(run_id, asyncio.get_running_loop().create_future())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(begun), POLL_S)
            elif status is Status.RUNNING:
                await asyncio.sleep(POLL_S)
            else:
                return

    async def _drain(self, thread_id: str) -> None:
        try:
            while True:
                self._dirty.discard(thread_id)
                head = next(iter(await queued_on(self._store, thread_id)), None)
                if head is None:
                    if thread_id in self._dirty:
                        continue  # poked while it looked
                    return
                agent = self._agents.get(head.agent)
                if agent is None:  # another server's: it is started there
                    await asyncio.sleep(POLL_S)
                    continue
                task = self._runner.resume(agent, head.run_id)
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
        state = await load_state(self._store, run_id)
        agent = self._agents.get(state.agent)
        if agent is not None and state.status is Status.RUNNING:
            error = await asyncio.shield(self._runner.resume(agent, run_id, wait=False))
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
