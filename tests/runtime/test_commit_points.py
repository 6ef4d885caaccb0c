"""Where a step's commits fall: one for an all-READ step, two when a call may change something.

A READ call may run before its intent is durable: a crash before the step's commit leaves the
model attempt open, and recovery asks the model again. Anything else (a WRITE, even an
idempotent one, or an IRREVERSIBLE call) runs only after the model's answer naming it and its
intent are committed, and what needs a human waits on a committed request.
"""

from __future__ import annotations

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.models import ScriptedModel
from support.stores import BatchRecordingStore


def _calls(*names: str) -> Message:
    return Message.assistant(tool_calls=[ToolCall(f"c{i}_{n}", n, {"x": i}) for i, n in enumerate(names)])


def _agent(store: BatchRecordingStore, script: list[Message | str], seen: list[str] | None = None) -> Agent:
    async def committed(ctx: ToolContext) -> None:
        if seen is not None:
            events = await store.load(ctx.run_id)
            started = any(e.type == "tool_started" and getattr(e.data, "call_id", "") == ctx.call_id for e in events)
            seen.append(f"{ctx.call_id} {'committed' if started else 'not committed'}")

    @tool(effect="read")
    async def look(x: int, ctx: ToolContext) -> str:
        """Read."""
        await committed(ctx)
        return "looked"

    @tool(effect="write", idempotent=True)
    async def put(x: int, ctx: ToolContext) -> str:
        """Idempotent write."""
        await committed(ctx)
        return "put"

    @tool(effect="write")
    async def write(x: int, ctx: ToolContext) -> str:
        """Write once."""
        await committed(ctx)
        return "written"

    @tool(effect="read", requires_approval=True)
    async def peek(x: int) -> str:
        """A read a human must allow."""
        return "peeked"

    return Agent(ScriptedModel(script), tools=[look, put, write, peek], store=store)


async def test_an_all_read_step_commits_once_with_the_next_attempt_and_a_write_step_twice() -> None:
    """Invariant: an all-READ step (one call or several) is one commit holding the model's answer,
    the intents, the results and the next model attempt; a WRITE step commits the answer and
    intent before the call and the result with the next attempt; a final answer is one commit."""
    store = BatchRecordingStore()
    response = await _agent(store, [_calls("look"), _calls("look", "look"), _calls("write"), "done"]).prompt("go")
    assert response.status == "completed"
    assert store.batches == [
        ["run_started", "model_attempt_started"],
        ["model_called", "tool_started", "tool_completed", "model_attempt_started"],
        ["model_called", *["tool_started"] * 2, *["tool_completed"] * 2, "model_attempt_started"],
        ["model_called", "tool_started"],
        ["tool_completed", "model_attempt_started"],
        ["model_called", "run_completed"],
    ]


async def test_a_read_runs_before_its_intent_is_durable_only_when_every_call_of_its_batch_is_read() -> None:
    """Invariant: beside a call that may change something (here an idempotent WRITE, whose key
    is stable only once the model's answer naming it is durable), every intent of the batch is
    committed before any call runs; in an all-READ batch none is."""
    seen: list[str] = []
    store = BatchRecordingStore()
    await _agent(store, [_calls("look"), _calls("look", "put"), "done"], seen).prompt("go")
    assert sorted(seen) == ["c0_look committed", "c0_look not committed", "c1_put committed"]
    assert ["model_called", "tool_started", "tool_started"] in store.batches


async def test_a_read_that_needs_approval_waits_on_a_committed_request() -> None:
    """Invariant: a READ call that needs a human is not run, and the run stops only once its
    approval request is durable."""
    store = BatchRecordingStore()
    response = await _agent(store, [_calls("peek"), "done"]).prompt("go")
    assert response.status == "awaiting_approval"
    assert [e.type for e in await store.load(response.run_id)][-1] == "approval_requested"
    assert store.batches[-1] == ["model_called", "approval_requested"]
