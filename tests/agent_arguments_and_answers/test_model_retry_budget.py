"""A tool raising `ModelRetry` hands the model a correction, journaled like any result; the
per-tool budget `@tool(max_retries=n)` counts corrections in a row, from the journal."""

from __future__ import annotations

from eudaimon import Agent, Message, ModelRetry, ToolCall, tool
from eudaimon.core.events import ToolCompleted
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore


def _call(call_id: str, **arguments: object) -> Message:
    return Message.assistant(tool_calls=[ToolCall(call_id, "find_user", dict(arguments))])


@tool(effect="read", max_retries=2)
def find_user(name: str) -> str:
    """Find a user by exact name."""
    if name != "Ada Lovelace":
        raise ModelRetry(f"no user named {name!r}; use the full name, e.g. 'Ada Lovelace'")
    return "user 7"


async def test_a_correction_reaches_the_model_and_the_journal() -> None:
    """Invariant: the correction is an error result the model reads, journaled with
    `retry=True`; the tool's next success counts as a normal result."""
    model = ScriptedModel([_call("c1", name="Ada"), _call("c2", name="Ada Lovelace"), "found user 7"])
    agent = Agent(model, tools=[find_user])
    response = await agent.prompt("find Ada")
    assert response.output == "found user 7"
    correction = model.requests[1].messages[-1]
    assert correction.is_error and "use the full name" in correction.content
    completed = [e.data for e in await agent.store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
    assert [(c.retry, c.is_error) for c in completed] == [(True, True), (False, False)]
    assert (await agent.state(response.run_id)).tool_retries == {}


async def test_the_budget_is_spent_after_max_retries_in_a_row_counted_by_the_fold() -> None:
    """Invariant: with max_retries=2 the third correction in a row is an error result saying the
    budget is spent (the run goes on: the model decides); the count is folded from the journal,
    so the state after any event (and a resumed run) has the count as it was then."""
    store = MemoryStore()
    model = ScriptedModel([_call("c1", name="A"), _call("c2", name="B"), _call("c3", name="C"), "gave up"])
    agent = Agent(model, tools=[find_user], store=store)
    response = await agent.prompt("find someone")
    assert response.status == "completed" and response.output == "gave up"
    results = [m for m in response.messages if m.tool_call_id]
    assert ["retry budget" in m.content for m in results] == [False, False, True]
    assert "max_retries=2" in results[-1].content
    state = await agent.state(response.run_id)
    assert state.tool_retries == {"find_user": 2}
    # Replaying the journal to the middle gives the count as it was then.
    seqs = [e.seq for e in await store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
    assert (await agent.state(response.run_id, at_seq=seqs[0])).tool_retries == {"find_user": 1}


async def test_corrections_of_one_batch_share_the_budget() -> None:
    """Invariant: corrections asked for by calls of one parallel batch count one after another,
    in call order: with max_retries=2, four failing calls of one batch give two corrections and
    two results saying the budget is spent, as four calls in a row would (they ran together, so
    none of them saw the others' corrections while it ran)."""
    batch = Message.assistant(tool_calls=[ToolCall(f"c{i}", "find_user", {"name": f"X{i}"}) for i in range(4)])
    agent = Agent(ScriptedModel([batch, "gave up"]), tools=[find_user])
    response = await agent.prompt("find four")
    results = [m for m in response.messages if m.tool_call_id]
    assert [m.tool_call_id for m in results] == ["c0", "c1", "c2", "c3"]
    assert ["retry budget" in m.content for m in results] == [False, False, True, True]
    completed = [e.data for e in await agent.store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
    assert [c.retry for c in completed] == [True, True, False, False]
    assert (await agent.state(response.run_id)).tool_retries == {"find_user": 2}
