"""The state a driver holds never runs ahead of its journal, even when an event cannot be written.

Bug: `RunJournal.record` folded an event into the state before `flush` tried to write it; an
event the store could not encode was lost from the buffer but stayed in the state, so the run's
failure was then appended at the wrong seq ("a misleading `CorruptEvent` about a row never
written") and the run was left `running` with no terminal event.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.errors import InvalidEvent, RunFailedError
from eudaimon.core.events import Event, RunFailed, ToolCompleted, ToolStarted
from eudaimon.core.state import RunState
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import Fence, Snapshot
from eudaimon.stores.sqlite import SqliteStore


async def test_an_event_that_would_not_read_back_changes_nothing(tmp_path: Path) -> None:
    """Invariant: `record` refuses a payload that would not read back before it touches the
    state or the buffer: the next valid event gets the next seq, and commits."""
    store = SqliteStore(tmp_path / "runs.db")
    try:
        agent = Agent(FunctionModel(lambda request: "hi"), store=store)
        await agent.prompt("go", run_id="r")
        journal = RunJournal(store, await load_state(store, "r"))
        before = journal.state.next_seq
        with pytest.raises(InvalidEvent, match="tool_completed"):
            journal.record(ToolCompleted(call_id="c", tool="t", output=None))  # type: ignore[arg-type]
        assert journal.state.next_seq == before
        journal.record(RunFailed(error="stop"))
        await journal.flush()
        assert len(await store.load("r")) == before + 1
    finally:
        await store.close()


class EncodeFails(SqliteStore):
    """A real SQLite store whose encoder fails on a batch holding a `tool_started` (as it would
    on a value `check_payload` did not foresee); everything else it stores as usual."""

    async def append(
        self,
        run_id: str,
        expected_seq: int,
        events: Sequence[Event],
        snapshot: Snapshot | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        if any(isinstance(e.data, ToolStarted) for e in events):
            raise ValueError("cannot encode this batch")
        await super().append(run_id, expected_seq, events, snapshot, fence=fence)


async def test_a_batch_the_store_cannot_encode_rolls_the_state_back_and_fails_the_run(tmp_path: Path) -> None:
    """Invariant: when the store cannot encode a batch, the driver's state returns to what the
    journal holds; the run then ends with a journaled `run_failed` at the right seq, and the
    live state equals the fold of the journal."""
    store = EncodeFails(tmp_path / "runs.db")
    try:

        @tool(effect="read")
        def look() -> str:
            """Look."""
            return "seen"

        def answer(request: ChatRequest) -> Message | str:
            return Message.assistant(tool_calls=[ToolCall("c", "look", {})])

        agent = Agent(FunctionModel(answer), tools=[look], store=store)
        journal = runtime_of(agent).start([Message.user("go")], input="go", thread_id=None, run_id="r")
        await runtime_of(agent).run(journal, None)
        events = await store.load("r")
        assert isinstance(events[-1].data, RunFailed) and events[-1].data.exception == "InvalidEvent"
        folded = RunState.from_events(events)
        assert journal.state == folded
        with pytest.raises(RunFailedError, match="could not encode"):
            runtime_of(agent).respond(journal)
    finally:
        await store.close()
