"""Write-ahead: the journal records an intent before every effect (DESIGN §2 f and m).

The model and the tool look at the committed journal at the moment they are called; a crash
at that moment would leave exactly that journal for recovery to read.
"""

from __future__ import annotations

from pathlib import Path

from eudaimon import Agent, Message, ToolCall, ToolContext, tool
from eudaimon.core.digest import idempotency_key
from eudaimon.core.events import ModelAttemptStarted, ToolStarted
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores import EventStore, MemoryStore


def _agent(store: EventStore, seen: list[str]) -> Agent:
    @tool(effect="write")
    async def charge(amount: int, ctx: ToolContext) -> str:
        """Charge a card."""
        events = await store.load(ctx.run_id)
        last = events[-1].data
        assert isinstance(last, ToolStarted) and last.call_id == ctx.call_id
        assert last.idempotency_key == ctx.idempotency_key == idempotency_key(ctx.run_id, ctx.call_id)
        seen.append(f"tool saw {events[-1].type} at seq {events[-1].seq}")
        return f"charged {amount}"

    async def model(request: ChatRequest) -> Message:
        runs = await store.list_runs()
        events = await store.load(runs[0].run_id)
        assert isinstance(events[-1].data, ModelAttemptStarted)
        seen.append(f"model saw {events[-1].type} at seq {events[-1].seq}")
        if len(request.messages) == 1:
            return Message.assistant(tool_calls=[ToolCall("c1", "charge", {"amount": 5})])
        return Message.assistant("charged")

    return Agent(FunctionModel(model), tools=[charge], store=store)


async def test_attempt_and_intent_are_committed_before_the_effect() -> None:
    """Invariant: model_attempt_started is committed before the model runs, tool_started before the tool."""
    seen: list[str] = []
    response = await _agent(MemoryStore(), seen).prompt("charge 5")
    assert response.final_text == "charged"
    assert seen == [
        "model saw model_attempt_started at seq 1",
        "tool saw tool_started at seq 3",
        "model saw model_attempt_started at seq 5",
    ]


async def test_the_same_holds_on_sqlite(tmp_path: Path) -> None:
    """Invariant: write-ahead holds on the embedded durable store too (another reader sees it)."""
    from eudaimon.stores import SqliteStore

    store = SqliteStore(tmp_path / "runs.db")
    seen: list[str] = []
    try:
        response = await _agent(store, seen).prompt("charge 5")
    finally:
        await store.close()
    assert response.status == "completed" and len(seen) == 3


async def test_a_step_costs_at_most_two_commits() -> None:
    """Invariant: one tool step is two atomic appends: model answer + intents, results + next attempt."""

    class AppendCountingStore(MemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.appends = 0

        async def append(self, run_id, expected_seq, events, snapshot=None, *, fence=None):  # type: ignore[no-untyped-def]
            self.appends += 1
            await super().append(run_id, expected_seq, events, snapshot, fence=fence)

    @tool(effect="read")
    async def noop(i: int) -> int:
        """Do nothing."""
        return i

    steps = 20
    script = [Message.assistant(tool_calls=[ToolCall(f"c{i}", "noop", {"i": i})]) for i in range(steps - 1)] + ["end"]
    from eudaimon.models import ScriptedModel

    store = AppendCountingStore()
    response = await Agent(ScriptedModel(script), tools=[noop], store=store).prompt("go")
    assert response.iterations == steps
    assert store.appends <= 2 * steps
