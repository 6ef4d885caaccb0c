"""`Agent(memory=None)` means no memory and no shared thread: prompts without a `thread_id`
neither see each other's history nor queue on one thread's lease. Not passing `memory` keeps
Daimon's default: a sliding window over the agent's one default thread."""

from __future__ import annotations

import asyncio

from eudaimon import Agent
from eudaimon.core.events import RunStarted
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore


async def _started(store: MemoryStore, run_id: str) -> RunStarted:
    first = (await store.load(run_id))[0].data
    assert isinstance(first, RunStarted)
    return first


async def test_without_memory_a_prompt_sends_only_its_own_input() -> None:
    """Bug: `Agent(memory=None)` still gave a sliding window, so a server calling
    `agent.prompt(user_input)` mixed every user's history into every other user's request.
    Now each run's `run_started` holds only its own input and names no thread."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["one", "two"]), memory=None, store=store)
    assert agent.memory is None and agent.default_thread is None
    first = await agent.prompt("alice's secret")
    second = await agent.prompt("bob asks")
    started = await _started(store, second.run_id)
    assert [m.content for m in started.messages] == ["bob asks"]
    assert started.thread_id is None and (await _started(store, first.run_id)).thread_id is None


async def test_without_memory_concurrent_prompts_do_not_queue_on_one_thread() -> None:
    """Bug: 4 concurrent prompts took 2.4 s instead of 0.5 s: they queued on one thread's lease.
    Without memory all 4 reach the model together (the model waits for all of them; prompts
    held one at a time would never get there)."""
    in_flight = 0
    all_in = asyncio.Event()

    async def answer(request: ChatRequest) -> str:
        nonlocal in_flight
        in_flight += 1
        if in_flight == 4:
            all_in.set()
        await all_in.wait()
        return "ok"

    agent = Agent(FunctionModel(answer), memory=None)
    prompts = asyncio.gather(*(agent.prompt(f"user {i}") for i in range(4)))
    responses = await asyncio.wait_for(prompts, timeout=30)  # a guard against a hang, not a timing
    assert [r.text() for r in responses] == ["ok"] * 4


async def test_not_passing_memory_keeps_the_shared_default_thread() -> None:
    """Invariant: Daimon's default stays: without `memory=`, prompts that name no thread continue
    the agent's default thread and its sliding window."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["one", "two"]), store=store)
    await agent.prompt("first")
    second = await agent.prompt("second")
    started = await _started(store, second.run_id)
    assert [m.content for m in started.messages] == ["first", "one", "second"]
    assert started.thread_id == "agent:default" == agent.default_thread


async def test_without_memory_a_named_thread_is_still_a_thread() -> None:
    """Invariant: with `memory=None` and a `thread_id`, the run belongs to that thread (its
    snapshot counts it), but no history is sent."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["one", "two"]), memory=None, store=store)
    await agent.prompt("first", thread_id="t")
    second = await agent.prompt("second", thread_id="t")
    started = await _started(store, second.run_id)
    assert started.thread_id == "t" and [m.content for m in started.messages] == ["second"]
    assert (await agent.thread("t")).turn_count == 2
