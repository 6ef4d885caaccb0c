"""In-process news of runs, for the streams that follow them.

Two kinds of listener:
- `subscribe(run_id)`: the raw stream events of a run this process drives (`/prompt/stream`).
- `follow(run_id, cursor)`: a run's journal, live. All the streams of one run share one `Feed`:
  one task reads the store when the run moves (at once when this process drives it and
  publishes, else every `POLL_S`) and encodes each event once, however many streams follow.
  Text and tool-argument deltas of runs driven here ride along, after the journal events that
  were committed before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass

from eudaimon.core.codec import event_to_dict
from eudaimon.core.events import Event
from eudaimon.stores.base import EventStore
from eudaimon.streaming import (
    Done,
    Error,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
)
from eudaimon.streaming import Usage as UsageEvent

POLL_S = 0.25
"""How often a feed reads the store when nothing in this process says the run moved."""
DELTA_BACKLOG = 1000
"""Deltas a slow stream may lag behind before further ones are dropped for it (journal events
are never dropped)."""

Item = StreamEvent | None
"""A stream event of a run driven here, or None: "the journal may have grown, look again"."""

NAMES: dict[type[StreamEvent], str] = {
    TextDelta: "text_delta",
    ToolCallStart: "tool_call_start",
    ToolCallDelta: "tool_call_delta",
    ToolCallEnd: "tool_call_end",
    ToolResult: "tool_result",
    UsageEvent: "usage",
    Error: "error",
    Done: "done",
}
DELTAS = (TextDelta, ToolCallStart, ToolCallDelta, ToolCallEnd)
"""What a journal stream carries besides the journal: what the model is writing right now."""


def sse(data: object, *, event: str | None = None, id: int | None = None) -> str:
    """One server-sent event; `data` as compact JSON (one line, so one `data:` field)."""
    head = (f"id: {id}\n" if id is not None else "") + (f"event: {event}\n" if event else "")
    return f"{head}data: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n"


def event_sse(event: Event) -> str:
    return sse(event_to_dict(event), event=event.type, id=event.seq)


def stream_event_sse(item: StreamEvent) -> str:
    return sse(dataclasses.asdict(item), event=NAMES.get(type(item), type(item).__name__))


@dataclass(frozen=True, slots=True)
class Fed:
    """What a feed hands its streams: a journal event (with its SSE text), or a delta's SSE text."""

    text: str
    event: Event | None = None


class Feed:
    def __init__(self, store: EventStore, run_id: str, cursor: int) -> None:
        self.store = store
        self.run_id = run_id
        self.cursor = cursor
        self.queues: set[asyncio.Queue[Fed]] = set()
        self.wake = asyncio.Event()
        self.deltas: list[StreamEvent] = []
        self.task: asyncio.Task[None] | None = None

    def publish(self, item: Item) -> None:
        if isinstance(item, DELTAS):
            self.deltas.append(item)
        self.wake.set()

    async def run(self) -> None:
        while self.queues:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), POLL_S)
            self.wake.clear()
            deltas, self.deltas = self.deltas, []
            try:
                events = await self.store.load(self.run_id, after_seq=self.cursor)
            except Exception:  # a store hiccup: the streams wait; the next round reads again
                events = []
            fed = [Fed(event_sse(e), e) for e in events]
            fed += [Fed(stream_event_sse(d)) for d in deltas]
            if events:
                self.cursor = events[-1].seq
            for queue in self.queues:
                for item in fed:
                    if item.event is not None or queue.qsize() < DELTA_BACKLOG:
                        queue.put_nowait(item)


class Hub:
    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._subscribers: dict[str, set[asyncio.Queue[Item]]] = {}
        self._feeds: dict[str, Feed] = {}

    @contextlib.contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Queue[Item]]:
        """A queue of the stream events of `run_id` while the block runs; gone when it exits."""
        queue: asyncio.Queue[Item] = asyncio.Queue(DELTA_BACKLOG)
        self._subscribers.setdefault(run_id, set()).add(queue)
        try:
            yield queue
        finally:
            _discard(self._subscribers, run_id, queue)

    @contextlib.contextmanager
    def follow(self, run_id: str, cursor: int) -> Iterator[asyncio.Queue[Fed]]:
        """The run's journal events and deltas from now on (some may be at or before `cursor`:
        the follower skips what it has)."""
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = self._feeds[run_id] = Feed(self.store, run_id, cursor)
        queue: asyncio.Queue[Fed] = asyncio.Queue()
        feed.queues.add(queue)
        if feed.task is None or feed.task.done():
            feed.task = asyncio.create_task(self._run(feed), name=f"eudaimon feed {run_id}")
        try:
            yield queue
        finally:
            feed.queues.discard(queue)
            feed.wake.set()  # a feed nobody follows ends now

    async def _run(self, feed: Feed) -> None:
        try:
            await feed.run()
        finally:
            if self._feeds.get(feed.run_id) is feed and not feed.queues:
                del self._feeds[feed.run_id]

    def publish(self, run_id: str, item: Item) -> None:
        for queue in self._subscribers.get(run_id, ()):
            if not queue.full():
                queue.put_nowait(item)
        feed = self._feeds.get(run_id)
        if feed is not None:
            feed.publish(item)

    @property
    def subscriber_count(self) -> int:
        raw = sum(len(queues) for queues in self._subscribers.values())
        return raw + sum(len(feed.queues) for feed in self._feeds.values())


def _discard(table: dict[str, set[asyncio.Queue[Item]]], run_id: str, queue: asyncio.Queue[Item]) -> None:
    queues = table.get(run_id)
    if queues is not None:
        queues.discard(queue)
        if not queues:
            del table[run_id]
