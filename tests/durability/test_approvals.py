"""Human approval: a run waits, a decision is journaled, resume acts on it exactly once."""

from __future__ import annotations

import asyncio

import pytest

from eudaimon import Agent, Message, ToolCall, ToolPolicy, tool
from eudaimon.core.messages import Role
from eudaimon.errors import InvalidOperation
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore

EXECUTED: list[str] = []


@tool(effect="irreversible")
async def send_money(to: str, amount: int) -> str:
    """Send money."""
    EXECUTED.append(to)
    return f"sent {amount} to {to}"


@tool(effect="read")
def balance() -> int:
    """Balance."""
    return 100


def _agent(store: MemoryStore, *script: Message | str, **options: object) -> Agent:
    return Agent(ScriptedModel(list(script)), tools=[send_money, balance], store=store, **options)  # type: ignore[arg-type]


def _pay(*targets: str) -> Message:
    return Message.assistant(
        tool_calls=[ToolCall(f"pay_{t}", "send_money", {"to": t, "amount": 5}) for t in targets]
        + [ToolCall("bal", "balance", {})]
    )


@pytest.fixture(autouse=True)
def _clear() -> None:
    EXECUTED.clear()


async def test_irreversible_calls_wait_for_a_human() -> None:
    """Invariant: an IRREVERSIBLE call is not executed before approval; the run says what it waits for;
    allowed siblings have already run."""
    store = MemoryStore()
    response = await _agent(store, _pay("ann"), "done").prompt("pay ann")
    assert response.status == "awaiting_approval"
    assert [(p.id, p.name, p.arguments) for p in response.pending_approvals] == [
        ("pay_ann", "send_money", {"to": "ann", "amount": 5})
    ]
    assert EXECUTED == []
    types = [e.type for e in await store.load(response.run_id)]
    assert "approval_requested" in types and types.count("tool_completed") == 1


async def test_approved_calls_run_exactly_once_even_with_racing_resumers() -> None:
    """Invariant: after approval, concurrent resumes dispatch the call once (the intent is the latch)."""
    store = MemoryStore()
    response = await _agent(store, _pay("ann"), "done").prompt("pay ann")
    await _agent(store).approve(response.run_id, "pay_ann", True, by="boss", note="fine")
    results = await asyncio.gather(*[_agent(store, "done").resume(response.run_id) for _ in range(4)])
    assert EXECUTED == ["ann"]
    assert {r.status for r in results} == {"completed"}
    assert (await _agent(store).state(response.run_id)).approvals == {}


async def test_denied_calls_are_shown_to_the_model_as_denied() -> None:
    """Invariant: a denial becomes tool_denied and an error result; the tool never runs."""
    store = MemoryStore()
    response = await _agent(store, _pay("eve"), "ok, not sent").prompt("pay eve")
    await _agent(store).approve(response.run_id, "pay_eve", False, by="boss", note="fraud")
    final = await _agent(store, "ok, not sent").resume(response.run_id)
    assert EXECUTED == [] and final.final_text == "ok, not sent"
    denial = next(m for m in final.messages if m.role is Role.TOOL and m.tool_call_id == "pay_eve")
    assert denial.is_error and "denied" in denial.content
    assert "tool_denied" in [e.type for e in await store.load(response.run_id)]


async def test_bad_approvals_are_clear_errors() -> None:
    """Invariant: approving an unknown call, a call twice, or a finished run fails clearly."""
    store = MemoryStore()
    response = await _agent(store, _pay("ann"), "done").prompt("pay")
    agent = _agent(store, "done")
    with pytest.raises(InvalidOperation, match="no call 'nope'"):
        await agent.approve(response.run_id, "nope", True)
    await agent.approve(response.run_id, "pay_ann", True)
    with pytest.raises(InvalidOperation, match="decided once"):
        await agent.approve(response.run_id, "pay_ann", False)
    await agent.resume(response.run_id)
    with pytest.raises(InvalidOperation):
        await agent.approve(response.run_id, "pay_ann", True)


async def test_approval_policy_decides_per_call() -> None:
    """Invariant: an approval_policy can allow an irreversible call, or deny or hold a harmless one."""
    store = MemoryStore()

    def policy(call: ToolCall, tool: object) -> ToolPolicy:
        if call.name == "balance":
            return ToolPolicy.REQUIRE_APPROVAL
        args = call.arguments if isinstance(call.arguments, dict) else {}
        return ToolPolicy.ALLOW if args.get("to") == "ann" else ToolPolicy.DENY

    response = await _agent(store, _pay("ann", "eve"), "done", approval_policy=policy).prompt("pay")
    assert EXECUTED == ["ann"]
    assert [p.name for p in response.pending_approvals] == ["balance"]
    types = [e.type for e in await store.load(response.run_id)]
    assert types.count("tool_denied") == 1 and types.count("approval_requested") == 1
