"""Invariant: a process reads one key a poll interval for all the runs it drives, however
many, and a cancel request left for one of them still stops that run, and only that one.

Bug (issue 20): every driving run read its own `cancel:<id>` key once a second, so 1,000
runs in flight cost 1,000 store reads a second, more the longer load made them last."""

from __future__ import annotations

import asyncio
import time

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.errors import Cancelled
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.loop import cancel_requests
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import MemoryStore
from eudaimon.stores.base import Snapshot

POLL_S = 0.1


class SnapshotReadCountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads: dict[str, int] = {}

    async def load_snapshot(self, key: str) -> Snapshot | None:
        kind = key if key == cancel_requests.CHANGES_KEY else key.split(":", 1)[0]
        self.reads[kind] = self.reads.get(kind, 0) + 1
        return await super().load_snapshot(key)


@tool(effect="read")
async def wait_a_bit() -> str:
    """Wait a little."""
    await asyncio.sleep(0.05)
    return "waited"


def _steps(count: int) -> FunctionModel:
    async def answer(request: ChatRequest) -> Message:
        await asyncio.sleep(0.05)
        done = sum(1 for m in request.messages if m.role.value == "tool")
        if done >= count:
            return Message.assistant("finished")
        return Message.assistant(tool_calls=[ToolCall(f"c{done}", "wait_a_bit", {})])

    return FunctionModel(answer)


async def test_many_runs_in_flight_read_one_key_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cancel_requests, "CANCEL_POLL_S", POLL_S)
    store = SnapshotReadCountingStore()
    agent = Agent(_steps(8), tools=[wait_a_bit], store=store, memory=None, max_iterations=50)
    await agent.prompt("warm", thread_id="warm")  # the process has looked once (a fresh one reads once per run)
    store.reads.clear()
    began = time.monotonic()
    responses = await asyncio.gather(*(agent.prompt("go", thread_id=f"t{i}") for i in range(40)))
    elapsed = time.monotonic() - began
    assert [r.final_text for r in responses] == ["finished"] * 40
    assert elapsed > 5 * POLL_S  # long enough that each run would have read its key several times
    assert store.reads.get("cancel", 0) == 0  # no request was left: no run read its own key
    assert store.reads.get(cancel_requests.CHANGES_KEY, 0) <= elapsed / POLL_S + 2


async def test_a_request_stops_its_run_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cancel_requests, "CANCEL_POLL_S", POLL_S)
    store = SnapshotReadCountingStore()
    agent = Agent(_steps(12), tools=[wait_a_bit], store=store, memory=None, max_iterations=50)
    await agent.prompt("warm", thread_id="warm")  # the process has read the mark once
    await asyncio.sleep(POLL_S)
    store.reads.clear()
    runs = [asyncio.create_task(agent.prompt("go", run_id=f"r{i}", thread_id=f"t{i}")) for i in range(10)]
    while len(await store.load("r3")) < 4:
        await asyncio.sleep(0.01)
    assert await operations.cancel(store, "r3", reason="enough", by="ops") is None  # left for its driver
    outcomes = await asyncio.gather(*runs, return_exceptions=True)
    assert isinstance(outcomes[3], Cancelled)
    assert all(
        not isinstance(o, BaseException) and o.final_text == "finished" for i, o in enumerate(outcomes) if i != 3
    )
    # The request was announced once; each run then read its own key once, not once a poll.
    assert store.reads["cancel"] <= 2 + len(runs)


async def test_a_workflows_journal_reads_no_cancel_key() -> None:
    """A Temporal workflow's journal (`replayed`) is cancelled as its workflow, and its store holds
    no requests: it reads no key and starts no read (a task on every run's workflow loop), even
    over a store that does hold one."""
    store = SnapshotReadCountingStore()
    agent = Agent(_steps(0), store=store, memory=None)
    done = await agent.prompt("go", run_id="r1")
    await cancel_requests.request_cancel(store, done.run_id, cancel_requests.CancelRequest(reason="late"))
    journal = RunJournal(store, await load_state(store, done.run_id))
    journal.replayed = True
    store.reads.clear()
    for _ in range(3):
        assert not journal.may_have_cancel_request()
        assert await journal.cancel_request() is None
        await asyncio.sleep(0)
    assert store.reads == {}
