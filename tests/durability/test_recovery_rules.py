"""Recovery after a crash (DESIGN §4): completed calls never re-run; interrupted calls re-run
only when their tool is READ or idempotent; anything else waits for reconciliation.

A crash is simulated by a BaseException escaping mid-call: the journal then ends exactly as
it would after a kill -9 at that point (the subprocess soak tests the real thing).
"""

from __future__ import annotations

import pytest

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.core.digest import idempotency_key
from eudaimon.errors import InvalidOperation
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs."""


def _calls(*names: str) -> Message:
    return Message.assistant(tool_calls=[ToolCall(f"call_{i}", n, {"x": i}) for i, n in enumerate(names)])


class Ledger:
    """What the outside world saw: one entry per execution, with the key it was given."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str, int]] = []
        self.crash_on: set[str] = set()

    def tools(self) -> list[object]:
        ledger = self

        @tool(effect="read")
        async def look(x: int, ctx: ToolContext) -> str:
            """Read."""
            return ledger.record("look", ctx)

        @tool(effect="write")
        async def write(x: int, ctx: ToolContext) -> str:
            """Write once."""
            return ledger.record("write", ctx)

        @tool(effect="write", idempotent=True)
        async def put(x: int, ctx: ToolContext) -> str:
            """Idempotent write."""
            return ledger.record("put", ctx)

        return [look, write, put]

    def record(self, name: str, ctx: ToolContext) -> str:
        self.entries.append((name, ctx.idempotency_key, ctx.attempt))
        if name in self.crash_on:
            self.crash_on.discard(name)
            raise Crash
        return f"{name} done"


def _agent(store: MemoryStore, ledger: Ledger, script: list[Message | str]) -> Agent:
    return Agent(ScriptedModel(script), tools=ledger.tools(), store=store)  # type: ignore[arg-type]


async def _crashed_run(kind: str, *also: str) -> tuple[MemoryStore, Ledger, str]:
    store, ledger = MemoryStore(), Ledger()
    ledger.crash_on.add(kind)
    with pytest.raises(Crash):
        await _agent(store, ledger, [_calls(kind, *also), "done"]).prompt("go")
    run_id = (await store.list_runs())[0].run_id
    assert (await store.load(run_id))[-1].type == "tool_started"
    return store, ledger, run_id


@pytest.mark.parametrize("batch", [("put",), ("look", "put")])
async def test_interrupted_rerunnable_call_reruns_with_the_same_key(batch: tuple[str, ...]) -> None:
    """Invariant: a READ or idempotent call found started is re-run once more, same key, next
    attempt. (A READ's intent is committed first only beside a call that changes something.)"""
    kind, *also = batch
    store, ledger, run_id = await _crashed_run(kind, *also)
    response = await _agent(store, ledger, ["done"]).resume(run_id)
    assert response.status == "completed"
    key = idempotency_key(run_id, "call_0")
    assert [e for e in ledger.entries if e[0] == kind] == [(kind, key, 1), (kind, key, 2)]


async def test_a_read_interrupted_before_its_step_committed_runs_again_after_the_model_is_asked_again() -> None:
    """Invariant: an all-READ step commits once, after its calls ran; a crash before that commit
    leaves the model attempt open, so recovery asks the model again, and the READ asked for
    again runs again with the same key, as attempt 1 (the first attempt was never journaled)."""
    store, ledger = MemoryStore(), Ledger()
    ledger.crash_on.add("look")
    with pytest.raises(Crash):
        await _agent(store, ledger, [_calls("look"), "done"]).prompt("go")
    run_id = (await store.list_runs())[0].run_id
    assert [e.type for e in await store.load(run_id)] == ["run_started", "model_attempt_started"]
    response = await _agent(store, ledger, [_calls("look"), "done"]).resume(run_id)
    assert response.status == "completed"
    key = idempotency_key(run_id, "call_0")
    assert ledger.entries == [("look", key, 1), ("look", key, 1)]
    types = [e.type for e in await store.load(run_id)]
    assert types.count("model_attempt_started") == 3 and types.count("tool_started") == 1


async def test_interrupted_write_waits_for_reconciliation_and_never_reruns() -> None:
    """Invariant: a WRITE call found started is never re-run: tool_outcome_unknown, status
    awaiting_reconciliation naming the call; reconciling with its output completes the run."""
    store, ledger, run_id = await _crashed_run("write")
    agent = _agent(store, ledger, ["all done"])
    paused = await agent.resume(run_id)
    assert paused.status == "awaiting_reconciliation"
    state = await agent.state(run_id)
    assert [c.id for c in state.unknown_outcomes()] == ["call_0"]
    again = await agent.resume(run_id)  # resuming again decides nothing new
    assert again.status == "awaiting_reconciliation"
    await agent.reconcile(run_id, "call_0", output="it was written", by="ops")
    response = await agent.resume(run_id)
    assert response.status == "completed" and response.final_text == "all done"
    assert [e[0] for e in ledger.entries] == ["write"]
    assert any(m.content == "it was written" for m in response.messages)
    types = [e.type for e in await store.load(run_id)]
    assert types.count("tool_outcome_unknown") == 1 and "tool_reconciled" in types


async def test_reconcile_with_retry_runs_it_again_with_the_same_key() -> None:
    """Invariant: an operator's retry=True re-runs the call as attempt 2 with the same key."""
    store, ledger, run_id = await _crashed_run("write")
    agent = _agent(store, ledger, ["done"])
    await agent.resume(run_id)
    await agent.reconcile(run_id, "call_0", retry=True, by="ops")
    assert (await agent.resume(run_id)).status == "completed"
    key = idempotency_key(run_id, "call_0")
    assert ledger.entries == [("write", key, 1), ("write", key, 2)]


async def test_reconcile_refuses_what_is_not_unknown() -> None:
    """Invariant: reconciling a call without an unknown outcome is a clear error."""
    store, ledger, run_id = await _crashed_run("write")
    agent = _agent(store, ledger, ["done"])
    with pytest.raises(InvalidOperation, match="no unknown outcome"):
        await agent.reconcile(run_id, "call_0", output="x")  # not yet marked unknown
    await agent.resume(run_id)
    with pytest.raises(InvalidOperation, match="exactly one"):
        await agent.reconcile(run_id, "call_0")


async def test_completed_calls_are_never_executed_again() -> None:
    """Invariant: a crash after some calls completed re-runs none of them."""
    store, ledger = MemoryStore(), Ledger()
    ledger.crash_on.add("look")
    with pytest.raises(Crash):
        await _agent(store, ledger, [_calls("write"), _calls("look"), "done"]).prompt("go")
    run_id = (await store.list_runs())[0].run_id
    # The READ step never committed: the model is asked again and asks for the READ again.
    await _agent(store, ledger, [_calls("look"), "done"]).resume(run_id)
    assert [e[0] for e in ledger.entries] == ["write", "look", "look"]


async def test_an_interrupted_model_attempt_is_reissued() -> None:
    """Invariant: model_attempt_started without an outcome means the call is made again."""
    store = MemoryStore()
    calls: list[int] = []

    def dying(request: ChatRequest) -> str:
        calls.append(1)
        raise Crash

    with pytest.raises(Crash):
        await Agent(FunctionModel(dying), store=store).prompt("hi")
    run_id = (await store.list_runs())[0].run_id
    assert (await store.load(run_id))[-1].type == "model_attempt_started"
    response = await Agent(ScriptedModel(["recovered"]), store=store).resume(run_id)
    assert response.final_text == "recovered"
    types = [e.type for e in await store.load(run_id)]
    assert types.count("model_attempt_started") == 2 and types.count("model_called") == 1


async def test_resuming_a_finished_run_changes_nothing() -> None:
    """Invariant: resume of a completed run returns its response and appends nothing."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["hello"]), store=store)
    response = await agent.prompt("hi")
    before = len(await store.load(response.run_id))
    again = await agent.resume(response.run_id)
    assert again.final_text == "hello" and len(await store.load(response.run_id)) == before
