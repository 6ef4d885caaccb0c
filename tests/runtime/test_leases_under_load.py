"""Invariant: a busy process keeps the runs nobody else has taken, renews its leases in bulk,
drives at most `EUDAIMON_MAX_ACTIVE_RUNS` runs at once, and gives a run's lease up when it stops.

Bugs (issue 14): 10,000 concurrent runs on SQLite failed with `LeaseLost` (renewals, one per
lease, came late and the process stopped its own runs); a finished run's lease was never
released, so three resumers of it came back after 28, 58 and 88 s."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.core.errors import LeaseHeld
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.runtime.process.leases import LeaseKeeper
from eudaimon.stores.sqlite import SqliteStore
from support.stores import RenewalCountingSqliteStore


async def test_many_held_leases_are_renewed_together(tmp_path: Path) -> None:
    """300 leases held past several lifetimes stay held, renewed by a few statements rather
    than one statement per lease per renewal."""
    store = RenewalCountingSqliteStore(tmp_path / "runs.db")
    keepers = [LeaseKeeper(store, f"run:{i}", ttl_s=0.6) for i in range(300)]
    try:
        for keeper in keepers:
            await keeper.acquire()
        await asyncio.sleep(1.5)  # 2.5 lifetimes: every lease needed renewing at least twice
        for keeper in keepers:
            with pytest.raises(LeaseHeld):
                await store.acquire_lease(keeper.name, "someone-else", 30)
        assert store.renewed >= 2 * len(keepers)
        assert store.statements * 20 <= store.renewed  # in bulk: at least 20 leases a statement
    finally:
        for keeper in keepers:
            await keeper.release()
        await store.close()


async def test_a_run_whose_process_stalled_past_its_lease_finishes_when_no_one_took_it(tmp_path: Path) -> None:
    """A tool that blocks the event loop longer than the lease lives (a busy process): nobody
    else took the run, so the run takes its lease back and completes instead of `LeaseLost`."""

    @tool(effect="read")
    async def hog() -> str:
        """Block the whole process for a while."""
        time.sleep(1.0)
        return "done hogging"

    script = iter([Message.assistant(tool_calls=[ToolCall("c1", "hog", {})]), Message.assistant("finished")])
    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(FunctionModel(lambda request: next(script)), tools=[hog], store=store)
    runtime_of(agent).lease_ttl_s = 0.4  # the lease lapses while the tool blocks
    try:
        response = await agent.prompt("go", thread_id="t")
        assert response.status == "completed" and response.final_text == "finished"
    finally:
        await store.close()


async def test_many_concurrent_runs_with_short_leases_all_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 concurrent runs on one SQLite file, with leases that must be renewed while they
    run, all complete: none loses its lease to its own process's load (the runs beyond
    EUDAIMON_MAX_ACTIVE_RUNS wait their turn holding no lease)."""
    monkeypatch.setenv("EUDAIMON_LEASE_TTL_S", "1.5")
    monkeypatch.setenv("EUDAIMON_MAX_ACTIVE_RUNS", "200")

    @tool(effect="read")
    async def lookup(key: str) -> str:
        """Look it up."""
        return key.upper()

    async def answer(request: ChatRequest) -> Message:
        await asyncio.sleep(0.3)
        last = request.messages[-1]
        if last.role.value == "tool":
            return Message.assistant(f"got {last.content}")
        return Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"key": last.content})])

    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(FunctionModel(answer), tools=[lookup], store=store)
    try:
        outcomes = await asyncio.gather(
            *(agent.prompt(f"k{i}", thread_id=f"t{i}") for i in range(1000)), return_exceptions=True
        )
    finally:
        await store.close()
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    assert not failures, f"{len(failures)} runs failed, first: {failures[0]!r}"
    assert all(o.final_text == f"got K{i}" for i, o in enumerate(outcomes) if not isinstance(o, BaseException))


async def test_at_most_max_active_runs_are_driven_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With EUDAIMON_MAX_ACTIVE_RUNS=3, twelve prompts at once never have more than three model
    calls in flight; all complete (the rest waited their turn)."""
    monkeypatch.setenv("EUDAIMON_MAX_ACTIVE_RUNS", "3")
    in_flight = most = 0

    async def answer(request: ChatRequest) -> str:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return "ok"

    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(FunctionModel(answer), store=store)
    try:
        responses = await asyncio.gather(*(agent.prompt("hi", thread_id=f"t{i}") for i in range(12)))
    finally:
        await store.close()
    assert [r.status for r in responses] == ["completed"] * 12
    assert most == 3


async def test_a_run_started_inside_a_tool_does_not_wait_for_its_parents_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one slot, a run whose tool prompts another agent still completes: the nested run
    drives in its parent's slot instead of waiting for it forever."""
    monkeypatch.setenv("EUDAIMON_MAX_ACTIVE_RUNS", "1")
    store = SqliteStore(tmp_path / "runs.db")
    inner = Agent(FunctionModel(lambda request: "inner answer"), store=store, name="inner")

    @tool(effect="read")
    async def ask_inner(question: str) -> str:
        """Ask the inner agent."""
        return (await inner.prompt(question, thread_id="inner")).final_text or ""

    script: Iterator[Message | str] = iter(
        [Message.assistant(tool_calls=[ToolCall("c1", "ask_inner", {"question": "q"})]), "outer done"]
    )
    outer = Agent(FunctionModel(lambda request: next(script)), tools=[ask_inner], store=store, name="outer")
    try:
        response = await asyncio.wait_for(outer.prompt("go", thread_id="outer"), timeout=60)
        assert response.final_text == "outer done"
        assert response.messages[-2].content == "inner answer"
    finally:
        await store.close()


async def test_a_finished_runs_lease_is_given_up_so_resumers_do_not_wait(tmp_path: Path) -> None:
    """Three resumers that reopened a run while it was live take its lease in turn as soon as
    the run ends, instead of each waiting for the last one's lease to expire (30 s)."""
    gate = asyncio.Event()

    async def answer(request: ChatRequest) -> str:
        await gate.wait()
        return "answered"

    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(FunctionModel(answer), store=store)
    try:
        first = asyncio.ensure_future(agent.prompt("hi", run_id="run-r", thread_id="t"))
        while not await store.load("run-r"):
            await asyncio.sleep(0.01)
        resumers = [asyncio.ensure_future(agent.resume("run-r")) for _ in range(3)]
        await asyncio.sleep(0.1)  # they reopened the live run and wait for its lease
        gate.set()
        assert (await first).final_text == "answered"
        taken = await store.acquire_lease("run:run-r", "someone-else", 30)  # given up, not left to expire
        assert taken.owner == "someone-else"
        await store.release_lease("run:run-r", "someone-else")
        done = await asyncio.wait_for(asyncio.gather(*resumers), timeout=15)  # half the 30 s lease
        assert [r.final_text for r in done] == ["answered"] * 3
    finally:
        gate.set()
        await store.close()
