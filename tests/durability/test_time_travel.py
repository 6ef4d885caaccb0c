"""Time travel, forks, snapshots and retention: all derived from the journal."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.state import Status
from eudaimon.errors import InvalidOperation, RunNotFound
from eudaimon.models import ScriptedModel
from eudaimon.runtime.process import operations
from eudaimon.stores import MemoryStore, SqliteStore

RUNS: list[int] = []


@tool(effect="write")
async def step(i: int) -> str:
    """A side effect we count."""
    RUNS.append(i)
    return f"step {i}"


def _script(n: int) -> list[Message | str]:
    return [Message.assistant(tool_calls=[ToolCall(f"c{i}", "step", {"i": i})]) for i in range(n)] + ["finished"]


async def test_state_at_any_seq_is_the_fold_of_that_prefix() -> None:
    """Invariant: agent.state(run, at_seq=n) is the state right after event n."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(_script(2)), tools=[step], store=store)
    response = await agent.prompt("go")
    events = await store.load(response.run_id)
    for n in range(len(events)):
        state = await agent.state(response.run_id, at_seq=n)
        assert state.next_seq == n + 1
    assert (await agent.state(response.run_id, at_seq=0)).status is Status.RUNNING
    assert (await agent.state(response.run_id)).status is Status.COMPLETED
    with pytest.raises(RunNotFound):
        await agent.state("run_missing")


async def test_fork_continues_from_a_past_point_without_redoing_it() -> None:
    """Invariant: a fork's history up to at_seq is the parent's; nothing recorded before at_seq
    executes again; it continues live from there."""
    RUNS.clear()
    store = MemoryStore()
    agent = Agent(ScriptedModel(_script(3)), tools=[step], store=store)
    parent = await agent.prompt("go")
    assert RUNS == [0, 1, 2]
    events = await store.load(parent.run_id)
    after_first = next(e.seq for e in events if e.type == "tool_completed")
    child = await agent.fork(parent.run_id, after_first)
    state = await agent.state(child)
    assert state.parent is not None and (state.parent.run_id, state.parent.seq) == (parent.run_id, after_first)
    assert [m.content for m in state.messages] == [
        m.content for m in (await agent.state(parent.run_id, after_first)).messages
    ]
    branch = Agent(ScriptedModel(["a different ending"]), tools=[step], store=store)
    forked = await branch.resume(child)
    assert forked.final_text == "a different ending"
    assert RUNS == [0, 1, 2], "the fork re-ran nothing"
    assert (await agent.state(parent.run_id)).output == "finished"
    with pytest.raises(InvalidOperation):
        await agent.fork(parent.run_id, 10_000)


async def test_snapshots_change_only_speed(tmp_path: Path) -> None:
    """Invariant: with snapshots, without them, or with them deleted, every state is equal."""
    store = SqliteStore(tmp_path / "runs.db")
    try:
        agent = Agent(ScriptedModel(_script(120)), tools=[step], store=store, max_iterations=200)
        response = await agent.prompt("go")
        snapshot = await store.load_snapshot(f"run:{response.run_id}")
        assert snapshot is not None and snapshot.version >= 199
        with_snapshot = await agent.state(response.run_id)
        middle = await agent.state(response.run_id, at_seq=150)
        assert await store.delete_snapshots() >= 1
        assert await agent.state(response.run_id) == with_snapshot
        assert await agent.state(response.run_id, at_seq=150) == middle
    finally:
        await store.close()


async def test_gc_deletes_old_finished_runs_and_spares_the_rest() -> None:
    """Invariant: gc removes finished runs older than the cutoff; unfinished and recent runs,
    and forks of deleted runs, remain readable."""
    store = MemoryStore()
    agent = Agent(ScriptedModel([*_script(1), "x"]), tools=[step], store=store)
    done = await agent.prompt("go")
    child = await agent.fork(done.run_id, 3)
    assert await operations.gc(store, timedelta(days=1)) == []
    deleted = await operations.gc(store, timedelta(seconds=-1))
    assert done.run_id in deleted and child not in deleted
    with pytest.raises(RunNotFound):
        await agent.state(done.run_id)
    assert (await agent.state(child)).next_seq == 4
