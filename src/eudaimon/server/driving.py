"""The runs this server drives: background tasks around the one loop, one per run.

Resuming (a queued run's start too: `server.queueing` journals it first) and cancelling go
through here, so the server knows which runs it drives (to cancel them at once with their token,
and never to drive one twice) and can publish their stream events to the hub. A task's outcome
is in the journal; this only logs what is not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from eudaimon.agent import Agent
from eudaimon.core.errors import EudaimonError, LeaseHeld, RunError
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.server.hub import Hub
from eudaimon.streaming import StreamEvent

logger = logging.getLogger("eudaimon.server")


class Runner:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._tasks: dict[str, asyncio.Task[Exception | None]] = {}
        self._tokens: dict[str, CancellationToken] = {}

    def is_driving(self, run_id: str) -> bool:
        return run_id in self._tasks

    @property
    def driving_count(self) -> int:
        return len(self._tasks)

    def task(self, run_id: str) -> asyncio.Task[Exception | None] | None:
        return self._tasks.get(run_id)

    def resume(self, agent: Agent, run_id: str, *, wait: bool = True) -> asyncio.Task[Exception | None]:
        """Continue `run_id` in the background (a no-op if this process drives it already).

        With `wait=False` a run whose lease another process holds is left to it."""
        running = self._tasks.get(run_id)
        if running is not None:
            return running
        token = CancellationToken()
        return self._spawn(run_id, token, agent.resume_stream(run_id, cancel=token, wait=wait))

    def cancel(self, run_id: str, reason: str, by: str | None) -> bool:
        """Cancel a run driven here, at once; False if this process does not drive it."""
        token = self._tokens.get(run_id)
        if token is None:
            return False
        token.cancel(reason, by=by)
        return True

    def _spawn(
        self, run_id: str, token: CancellationToken, events: AsyncIterator[StreamEvent]
    ) -> asyncio.Task[Exception | None]:
        task = asyncio.create_task(self._drive(run_id, events), name=f"eudaimon run {run_id}")
        self._tasks[run_id] = task
        self._tokens[run_id] = token
        return task

    async def _drive(self, run_id: str, events: AsyncIterator[StreamEvent]) -> Exception | None:
        """Drain the run's events into the hub; return the error that stopped it, if any."""
        try:
            async for event in events:
                self.hub.publish(run_id, event)
            return None
        except LeaseHeld as exc:
            logger.info("run %s is driven by another process; leaving it to it", run_id)
            return exc
        except RunError as exc:  # an input guardrail, or how the run ended (also in its journal)
            logger.info("run %s: %s", run_id, exc)
            return exc
        except EudaimonError as exc:
            logger.warning("run %s stopped: %s", run_id, exc)
            return exc
        except Exception as exc:
            logger.exception("run %s stopped on an unexpected error", run_id)
            return exc
        finally:
            if self._tasks.get(run_id) is asyncio.current_task():
                del self._tasks[run_id]
                del self._tokens[run_id]
            self.hub.publish(run_id, None)

    async def aclose(self) -> None:
        """Stop driving: each run keeps what it committed, and its lease lapses for a successor."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
