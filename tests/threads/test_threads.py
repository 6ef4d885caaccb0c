"""Threads: memory carries a conversation across prompts, one prompt at a time, and the thread
snapshot keeps its running totals (DESIGN §7, agent-state.txt)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.core.events import RunStarted
from eudaimon.core.messages import Role, Usage
from eudaimon.cost import OpenAICostModel
from eudaimon.errors import LeaseHeld, MaxIterations, OutputRejected
from eudaimon.guardrails import Pass, RetryWithFeedback
from eudaimon.memory import SqliteMemory
from eudaimon.models import ChatRequest, ChatResponse, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore, SqliteStore


def _echo_model(seen: list[list[str]]) -> FunctionModel:
    def answer(request: ChatRequest) -> str:
        seen.append([m.content for m in request.messages])
        return f"answer to {request.messages[-1].content}"

    return FunctionModel(answer)


async def test_a_thread_remembers_and_threads_are_separate() -> None:
    """Invariant: a prompt on a thread sees that thread's earlier turns and no other thread's."""
    seen: list[list[str]] = []
    agent = Agent(_echo_model(seen), system_prompt="sys")
    await agent.prompt("one", thread_id="a")
    await agent.prompt("two", thread_id="b")
    await agent.prompt("three", thread_id="a")
    await agent.prompt("default")
    assert seen[2] == ["sys", "one", "answer to one", "three"]
    assert seen[1] == ["sys", "two"]
    assert seen[3] == ["sys", "default"]


async def test_a_second_prompt_on_a_thread_waits_for_the_first() -> None:
    """Invariant: prompts on one thread never interleave: the second starts after the first ends
    and sees its answer; asked not to wait, it fails clearly."""
    release = asyncio.Event()
    seen: list[list[str]] = []

    async def slow(request: ChatRequest) -> str:
        seen.append([m.content for m in request.messages])
        if request.messages[-1].content == "first":
            await release.wait()
        return f"re: {request.messages[-1].content}"

    agent = Agent(FunctionModel(slow))
    first = asyncio.create_task(agent.prompt("first", thread_id="t"))
    while not seen:
        await asyncio.sleep(0.01)
    with pytest.raises(LeaseHeld, match="thread:t"):
        await agent.prompt("impatient", thread_id="t", wait=False)
    second = asyncio.create_task(agent.prompt("second", thread_id="t"))
    await asyncio.sleep(0.1)
    assert len(seen) == 1, "the second prompt must not start while the first runs"
    release.set()
    await first
    await second
    assert seen[1] == ["first", "re: first", "second"]


class Crash(BaseException):
    pass


async def test_crash_and_resume_put_every_message_in_memory_once(tmp_path: Path) -> None:
    """Invariant: memory is fed from committed events by id: after a crash and a resume, each
    message of the turn is in memory exactly once and no tool call is left without its result."""
    store = SqliteStore(tmp_path / "runs.db")
    memory = await SqliteMemory.open(tmp_path / "memory.db")
    crashed: list[bool] = []

    @tool(effect="read")
    async def lookup(ctx: ToolContext) -> str:
        """Crashes the first time."""
        if not crashed:
            crashed.append(True)
            raise Crash
        return "found"

    script = [Message.assistant(tool_calls=[ToolCall("c1", "lookup", {})]), "done"]
    try:
        with pytest.raises(Crash):
            await Agent(ScriptedModel(script), tools=[lookup], store=store, memory=memory).prompt("find", thread_id="t")
        run_id = (await store.list_runs())[0].run_id
        # A READ step commits once, after its calls: the crash lost the step, so the model is
        # asked again (the same script) and the READ runs again.
        agent = Agent(ScriptedModel(script), tools=[lookup], store=store, memory=memory)
        await agent.resume(run_id)
        await agent.resume(run_id)
        messages = await memory.get_messages("t")
        assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
        assert len({m.id for m in messages}) == 4
    finally:
        await memory.close()
        await store.close()


async def test_the_thread_snapshot_counts_turns_usage_and_cost_per_serving_model() -> None:
    """Invariant: turn_count and usage add up; cost is None until a priced call, then the sum of
    each call priced at the model that served it."""
    store = MemoryStore()
    free = Agent(ScriptedModel([ChatResponse(Message.assistant("hi"), usage=Usage(10, 5))]), store=store, name="bot")
    await free.prompt("hello", thread_id="t")
    snapshot = await free.thread("t")
    assert (snapshot.turn_count, snapshot.total_usage, snapshot.accumulated_cost_usd) == (1, Usage(10, 5), None)

    priced = Agent(
        ScriptedModel(
            [
                ChatResponse(Message.assistant("a"), usage=Usage(1000, 100), model="gpt-4o"),
                ChatResponse(Message.assistant("b"), usage=Usage(1000, 100), model="gpt-4o-mini"),
            ],
            model_id="gpt-4o",
        ),
        store=store,
        cost_model=OpenAICostModel(),
        name="bot",
    )
    first = await priced.prompt("q1", thread_id="t")
    second = await priced.prompt("q2", thread_id="t")
    snapshot = await priced.thread("t")
    assert snapshot.turn_count == 3
    assert snapshot.total_usage == Usage(2010, 205)
    assert first.cost > second.cost > 0
    assert snapshot.accumulated_cost_usd == pytest.approx(first.cost + second.cost)
    assert await store.delete_snapshots() >= 1
    assert await priced.thread("t") == snapshot, "the snapshot is derived: rebuilt equal"


class AlwaysRetry:
    name = "always_retry"

    async def check(self, text: str) -> RetryWithFeedback:
        return RetryWithFeedback("try again")


async def test_consecutive_guardrail_rejections_bind_across_turns() -> None:
    """Invariant: the cap of 8 consecutive output-guardrail rejections counts across a thread's
    runs, as agent-state.txt's guardrail_retries says."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["nope"] * 20), output_guardrails=[AlwaysRetry()], max_iterations=5, store=store)
    with pytest.raises(MaxIterations):
        await agent.prompt("first", thread_id="t")
    assert (await agent.thread("t")).guardrail_retries == 5
    with pytest.raises(OutputRejected) as info:
        await agent.prompt("second", thread_id="t")
    state = await agent.state(info.value.run_id or "")
    assert state.steps == 3, "3 more rejections reach the cap of 8"
    assert state.error_limit == 8, "the cap is journaled with the failure"


async def test_a_thread_is_not_locked_after_a_run_reached_the_rejection_cap() -> None:
    """Bug: after 8 consecutive rejected answers, every later prompt on the thread failed before
    the model was called, and nothing reset it. The run that reaches the cap fails; the next
    prompt starts with a fresh count (its run_started carries 0) and its answer is accepted."""
    store = MemoryStore()
    verdicts = iter([True] * 8 + [False])

    class RejectEight:
        name = "reject_eight"

        async def check(self, text: str) -> RetryWithFeedback | Pass:
            return RetryWithFeedback("try again") if next(verdicts) else Pass()

    agent = Agent(ScriptedModel(["nope"] * 8 + ["fine"]), output_guardrails=[RejectEight()], store=store)
    with pytest.raises(OutputRejected):
        await agent.prompt("first", thread_id="t")
    assert (await agent.thread("t")).guardrail_retries == 0
    response = await agent.prompt("second", thread_id="t")
    assert response.text() == "fine"
    events = await store.load(response.run_id)
    assert isinstance(events[0].data, RunStarted) and events[0].data.guardrail_retries == 0
    assert [e.type for e in events].count("model_called") == 1
