"""`agent.as_tool(...)`: each call is a child run in the parent's store, linked both ways; the
child's approvals surface on the parent; its spend is the parent's and counts against its budget."""

from __future__ import annotations

import pytest

from eudaimon import Agent, tool
from eudaimon.core.errors import BudgetExceeded
from eudaimon.core.events import RunStarted, ToolCompleted
from eudaimon.core.messages import Message, ToolCall, Usage
from eudaimon.models import ChatResponse, ScriptedModel, StopReason
from eudaimon.stores import MemoryStore


def _ask(call_id: str, text: str, name: str = "researcher") -> Message:
    return Message.assistant(None, [ToolCall(call_id, name, {"input": text})])


def _answer(text: str, tokens: int) -> ChatResponse:
    return ChatResponse(Message.assistant(text), StopReason.END_TURN, Usage(tokens, tokens))


class FlatPrice:
    """One cent per token, for every model."""

    def cost_per_token(self, model_id: str, direction: object) -> float:
        return 0.01


async def test_child_run_is_journaled_and_linked_both_ways() -> None:
    """Invariant: the child's `run_started.parent_call` names the parent's call, the parent's
    `tool_completed.child_run_id` names the child, both in the parent's store; the child's
    usage is added to the parent's."""
    store = MemoryStore()
    child_model = ScriptedModel([_answer("42", 5)])
    child = Agent(child_model, name="researcher", system_prompt="You research.")
    parent = Agent(
        ScriptedModel([_ask("c1", "what is the answer?"), _answer("it is 42", 1)]),
        tools=[child.as_tool(description="Ask the researcher.")],
        store=store,
    )
    response = await parent.prompt("question")
    assert response.final_text == "it is 42"
    completed = [e.data for e in await store.load(response.run_id) if isinstance(e.data, ToolCompleted)]
    assert [(c.output, c.child_run_id is not None) for c in completed] == [("42", True)]
    child_id = completed[0].child_run_id
    assert child_id is not None
    started = (await store.load(child_id))[0].data
    assert isinstance(started, RunStarted)
    assert (started.parent_call.run_id, started.parent_call.call_id) == (response.run_id, "c1")  # type: ignore[union-attr]
    assert [m.content for m in started.messages] == ["You research.", "what is the answer?"]
    assert response.usage == Usage(6, 6)  # the parent's own 1+1 and the child's 5+5
    assert child_model.requests[0].messages[-1].content == "what is the answer?"


async def test_child_waiting_for_approval_surfaces_and_is_decided_on_the_parent() -> None:
    """Invariant: a child waiting for a human makes the parent wait too, listing the child's
    call; approving it on the parent, then resuming the parent, continues both, and the
    irreversible tool runs once."""
    sent: list[str] = []

    @tool(effect="irreversible")
    def send_money(to: str) -> str:
        """Send money."""
        sent.append(to)
        return f"sent to {to}"

    child = Agent(
        ScriptedModel([Message.assistant(None, [ToolCall("k1", "send_money", {"to": "bob"})]), "paid bob"]),
        name="payer",
        tools=[send_money],
    )
    parent = Agent(ScriptedModel([_ask("c1", "pay bob", "payer"), "bob is paid"]), tools=[child.as_tool()])
    paused = await parent.prompt("pay")
    assert paused.status == "awaiting_approval"
    assert [(p.id, p.name) for p in paused.pending_approvals] == [("k1", "send_money")]
    await parent.approve(paused.run_id, "k1", by="ann")
    done = await parent.resume(paused.run_id)
    assert (done.status, done.final_text, sent) == ("completed", "bob is paid", ["bob"])


async def test_child_spend_counts_against_the_parent_budget() -> None:
    """Invariant: what a child run spends is billed to the parent; a parent over budget stops
    before its next model call."""
    child = Agent(ScriptedModel([_answer("expensive", 50)]), name="researcher", cost_model=FlatPrice())
    parent = Agent(
        ScriptedModel([_ask("c1", "dig"), _answer("never", 1)]),
        tools=[child.as_tool()],
        cost_model=FlatPrice(),
        max_budget=0.5,
    )
    with pytest.raises(BudgetExceeded) as info:
        await parent.prompt("go")
    state = await parent.state(info.value.run_id)  # type: ignore[arg-type]
    assert state.cost_usd == pytest.approx(1.0)  # the child's 100 tokens at a cent


async def test_child_is_given_only_what_is_left_of_the_parent_budget() -> None:
    """Invariant: a child starts with the parent's remaining budget as its limit, so it stops
    itself instead of overspending."""
    child = Agent(
        ScriptedModel(
            [
                ChatResponse(Message.assistant(None, [ToolCall("k1", "noop", {})]), StopReason.TOOL_USE, Usage(10, 10)),
                _answer("late", 1),
            ]
        ),
        name="researcher",
        cost_model=FlatPrice(),
        tools=[tool(lambda: "ok", name="noop", effect="read")],
    )
    spendy = ScriptedModel([ChatResponse(_ask("c1", "dig"), StopReason.TOOL_USE, Usage(20, 20)), "unreached"])
    parent = Agent(spendy, tools=[child.as_tool()], cost_model=FlatPrice(), max_budget=0.5)
    with pytest.raises(BudgetExceeded):
        await parent.prompt("go")
    [child_id] = [r.run_id for r in await parent.store.list_runs() if "." in r.run_id]
    child_state = await parent.state(child_id)
    # $0.40 of $0.50 spent when the child started: its first call ($0.20) ran, the limit stopped the second.
    assert (child_state.status, child_state.steps) == ("budget_exceeded", 1)


async def test_a_failed_child_is_an_error_result_for_the_parent_model() -> None:
    """Invariant: a child run that fails is an error result the parent's model sees, never the parent's end."""
    child = Agent(ScriptedModel([]), name="researcher")  # fails at once: no response scripted
    model = ScriptedModel([_ask("c1", "dig"), "managed without"])
    parent = Agent(model, tools=[child.as_tool()])
    response = await parent.prompt("go")
    assert response.final_text == "managed without"
    result = model.requests[1].messages[-1]
    assert result.is_error and "did not answer" in result.content
