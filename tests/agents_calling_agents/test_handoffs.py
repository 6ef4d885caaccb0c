"""Handoffs: the model transfers the conversation to another agent, journaled as `handed_off`;
the receiving agent continues with the history, its own tools and instructions, and its
answer is the run's."""

from __future__ import annotations

from eudaimon import Agent, tool
from eudaimon.core.events import HandedOff, RunStarted
from eudaimon.core.messages import Message, Role, ToolCall
from eudaimon.models import ScriptedModel


@tool(effect="read")
def invoice_total(invoice: str) -> str:
    """The total of an invoice."""
    return f"{invoice}: 120 EUR"


async def test_handoff_continues_with_the_history_and_the_receivers_tools() -> None:
    """Invariant: the receiving agent sees its own instructions, the conversation so far (not
    the sender's system prompt) and its own tools; its answer ends the sender's run."""
    billing_model = ScriptedModel(
        [Message.assistant(None, [ToolCall("b1", "invoice_total", {"invoice": "INV-7"})]), "INV-7 is 120 EUR"]
    )
    billing = Agent(billing_model, name="billing", system_prompt="You handle billing.", tools=[invoice_total])
    triage_model = ScriptedModel([Message.assistant("Passing you on.", [ToolCall("t1", "transfer_to_billing", {})])])
    triage = Agent(triage_model, name="triage", system_prompt="You route questions.", handoffs=[billing])

    response = await triage.prompt("How much is INV-7?")
    assert (response.status, response.final_text) == ("completed", "INV-7 is 120 EUR")
    assert "transfer_to_billing" in {s.name for s in triage_model.requests[0].tools}

    first = billing_model.requests[0]
    assert [(m.role, m.content) for m in first.messages] == [
        (Role.SYSTEM, "You handle billing."),
        (Role.USER, "How much is INV-7?"),
    ]
    assert {s.name for s in first.tools} == {"invoice_total"}

    events = await triage.store.load(response.run_id)
    [handed] = [e.data for e in events if isinstance(e.data, HandedOff)]
    assert handed.agent == "billing" and handed.call_id == "t1"
    started = (await triage.store.load(handed.to_run_id))[0].data
    assert isinstance(started, RunStarted) and started.agent == "billing"
    assert started.parent_call is not None and started.parent_call.run_id == response.run_id
    state = await triage.state(response.run_id)
    assert state.handed_off_to == handed.to_run_id


async def test_a_handoff_with_sibling_calls_answers_after_the_whole_batch() -> None:
    """Bug guarded: the handoff's answer was placed before the results of calls asked for with
    it, leaving the model's calls without results in the history."""
    billing = Agent(ScriptedModel(["billing here"]), name="billing")
    triage_model = ScriptedModel(
        [
            Message.assistant(
                None, [ToolCall("t1", "transfer_to_billing", {}), ToolCall("t2", "invoice_total", {"invoice": "X"})]
            )
        ]
    )
    triage = Agent(triage_model, name="triage", tools=[invoice_total], handoffs=[billing])
    response = await triage.prompt("hi")
    roles = [m.role for m in response.messages]
    assert roles[-4:] == [Role.ASSISTANT, Role.TOOL, Role.TOOL, Role.ASSISTANT]
    assert response.final_text == "billing here"
