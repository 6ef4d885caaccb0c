"""`JournalMemory`: a thread's history read back from the journal, with no copy of its own.

The journal already holds every message a thread's runs committed, and the newest run's
transcript is the thread's history so far: the history its `run_started` was sent, then what
the run added. Reading that back, instead of keeping a second copy in another database, makes
the history exactly as durable as the runs, costs no write at all, and (with a SQLite or
PostgreSQL journal, which store each message once: `eudaimon.stores.packing`) keeps a thread's
storage linear in its length.
"""

from __future__ import annotations

from eudaimon.core.errors import ConfigurationError
from eudaimon.core.messages import Message, Role
from eudaimon.core.state import RunState
from eudaimon.memory._groups import GroupWindow
from eudaimon.memory.base import check_window
from eudaimon.stores.base import EventStore


class JournalMemory:
    """History straight from the journal's runs of each thread.

    Args:
        store: The agent's own store (the journal its runs are written to).
        max_messages: Send at most this many of the newest messages, cut at whole tool-call
            groups; `None` sends the whole thread.
        default_thread: The thread `thread_id=None` means. Runs record the thread they
            belong to, and a prompt without a thread runs on its agent's default thread
            (`"<agent name>:default"`), which the memory cannot guess.

    `add_message` does nothing: the runs already wrote every message. `clear` starts the
    thread afresh: the next run is sent no history, and from then on the journal itself says
    so (that run's transcript starts empty). A process that restarts between `clear` and the
    thread's next run has forgotten the clear.
    """

    def __init__(
        self, store: EventStore, *, max_messages: int | None = None, default_thread: str | None = None
    ) -> None:
        check_window("max_messages", max_messages)
        self.store = store
        self.max_messages = max_messages
        self.default_thread = default_thread
        self._cleared: dict[str, str | None] = {}
        """Thread → its newest run when cleared: that run's messages are no longer history."""

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        thread = self._thread(thread_id)
        newest = await self._newest_run(thread)
        if newest is None or (thread in self._cleared and self._cleared[thread] == newest.run_id):
            return []
        self._cleared.pop(thread, None)
        window = GroupWindow(self.max_messages, _one)
        for message in _history(newest):
            window.add(message)
        return window.visible()

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        """Nothing to do: the message is in the journal already, or memory would not be told of it."""
        self._thread(thread_id)

    async def clear(self, thread_id: str | None = None) -> None:
        thread = self._thread(thread_id)
        newest = await self._newest_run(thread)
        self._cleared[thread] = None if newest is None else newest.run_id

    def __repr__(self) -> str:
        return f"JournalMemory({self.store!r}, max_messages={self.max_messages})"

    def _thread(self, thread_id: str | None) -> str:
        thread = thread_id if thread_id is not None else self.default_thread
        if thread is None:
            raise ConfigurationError(
                "JournalMemory reads a thread's runs, so it needs to know the thread: pass thread_id to the "
                "prompt, or build it with JournalMemory(store, default_thread=...) (an agent's own default "
                "thread is '<agent name>:default')"
            )
        return thread

    async def _newest_run(self, thread: str) -> RunState | None:
        """The newest run of the thread that memory fed, as folded from its events."""
        summaries = await self.store.list_runs(thread_id=thread, limit=1_000_000_000)
        for summary in sorted(summaries, key=lambda s: s.created_at, reverse=True):
            state = RunState.from_events(await self.store.load(summary.run_id))
            if state is not None and state.uses_memory and state.started:  # a queued run has no transcript yet
                return state
        return None


def _history(state: RunState) -> list[Message]:
    """The run's transcript without system messages, and without a turn still waiting for tool
    results (memory never holds a call without its results)."""
    messages = state.messages[: len(state.messages) - 1 if state.pending else None]
    return [m for m in messages if m.role is not Role.SYSTEM]


def _one(_: Message) -> int:
    return 1
