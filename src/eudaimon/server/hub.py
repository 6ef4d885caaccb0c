"""In-process news of the runs this process drives, for the streams that follow them.

The journal is what a stream sends; the hub only says "look again now" (so a stream of a run
driven here needs no polling delay) and carries the live text and tool-argument deltas, which
are not journal facts. A stream of a run driven by another process polls the store instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

from eudaimon.streaming import StreamEvent

QUEUE_LIMIT = 1000
"""Deltas a slow subscriber may lag behind before further ones are dropped for it (the journal
events it gets are read from the store and never dropped)."""

Item = StreamEvent | None
"""A stream event of a run driven here, or None: "the journal may have grown, look again"."""


class Hub:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Item]]] = {}

    @contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Queue[Item]]:
        """A queue of what happens to `run_id` while the block runs; gone when it exits."""
        queue: asyncio.Queue[Item] = asyncio.Queue(QUEUE_LIMIT)
        self._subscribers.setdefault(run_id, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._subscribers.get(run_id)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._subscribers[run_id]

    def publish(self, run_id: str, item: Item) -> None:
        for queue in self._subscribers.get(run_id, ()):
            if not queue.full():
                queue.put_nowait(item)

    @property
    def subscriber_count(self) -> int:
        return sum(len(queues) for queues in self._subscribers.values())
