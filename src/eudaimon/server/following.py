"""Following a run's journal as folded states, for the protocol adapters (A2A, AG-UI).

The adapters answer from the journal, never from a process's memory, so they read the same
after a restart and for a run another process drives. The hub only says when to look again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from eudaimon.core.events import Event
from eudaimon.core.state import RunState
from eudaimon.server.context import ServerContext

WAIT_S = 1.0
"""How long a follower waits for news of the run before it reads the journal anyway."""


def settled(state: RunState | None) -> bool:
    """Whether the run ended or waits for a person: where a follower stops."""
    return state is not None and (state.status.is_terminal or state.status.is_paused)


async def journal_batches(
    ctx: ServerContext, run_id: str, state: RunState | None
) -> AsyncGenerator[tuple[RunState, list[Event]]]:
    """Each batch of journal events after `state` (all of them for None), with the state after
    it, until the run settles. A run with no events yet (queued) is waited for."""
    cursor = -1 if state is None else state.next_seq - 1
    with ctx.hub.follow(run_id, cursor) as queue:
        while True:
            events = await ctx.store.load(run_id, after_seq=cursor)
            if events:
                state = state if state is not None else RunState(run_id=run_id)
                for event in events:
                    state.apply(event)
                cursor = events[-1].seq
                yield state, events
            if settled(state):
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(queue.get(), WAIT_S)
            while not queue.empty():
                queue.get_nowait()
