"""The Python surface of the approval rules, on a SQLite file and on PostgreSQL:

- a decision is a real bool: `approve(run, call, "false")` is refused, nothing journaled;
- an approver's edit is judged by the agent's approval policy (DENY: `EditDenied`, nothing
  journaled, the call still waits), and `approval_decided` keeps `original_arguments`;
- an edit approved where the policy was not known (the store-only CLI) is still judged before
  the call runs: the run that resumes it denies it;
- numbers no tool should get (non-finite, integers beyond 64 bits) are refused in the model's
  arguments as in a human's: the model is told, the tool never runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from eudaimon import Agent, ToolCall, tool
from eudaimon.core.events import ApprovalDecided, ToolDenied, ToolStarted
from eudaimon.errors import EditDenied, InvalidArguments, InvalidOperation
from eudaimon.runtime.process import operations
from eudaimon.stores.base import EventStore
from eudaimon.tools import Tool, ToolPolicy
from support.agents import calls_once
from support.stores import fresh_store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    async with fresh_store(request.param, tmp_path) as opened:
        yield opened


def _policy(call: ToolCall, _: Tool) -> ToolPolicy:
    amount = call.arguments.get("amount_usd", 0) if isinstance(call.arguments, dict) else 0
    return ToolPolicy.DENY if amount > 10_000 or amount < 0 else ToolPolicy.REQUIRE_APPROVAL


def _refunder(store: EventStore, ran: list[Any], arguments: str = '{"order": "A-7", "amount_usd": 500}') -> Agent:
    @tool(effect="write")
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(amount_usd)
        return f"refunded ${amount_usd:.2f} on {order}"

    return calls_once(
        refund, arguments, call_id="r1", then="Result: {}".format, store=store, name="refunder", approval_policy=_policy
    )


@pytest.mark.parametrize("approved", ["false", "true", 0, 1, None])
async def test_a_decision_that_is_not_a_bool_is_refused(store: EventStore, approved: Any) -> None:
    """Invariant: `Agent.approve` and `operations.approve` refuse a decision that is not a bool
    (`"false"` is truthy), naming what to send; nothing is journaled."""
    agent = _refunder(store, [])
    paused = await agent.prompt("refund")
    before = len(await store.load(paused.run_id))
    with pytest.raises(InvalidOperation, match=r"True \(approve\) or False \(deny\)"):
        await agent.approve(paused.run_id, "r1", approved)
    with pytest.raises(InvalidOperation, match="a decision is True"):
        await operations.approve(store, paused.run_id, "r1", approved)
    assert len(await store.load(paused.run_id)) == before


@pytest.mark.parametrize("amount", [50_000, -50_000])
async def test_an_edit_the_policy_denies_is_refused_and_the_call_still_waits(store: EventStore, amount: int) -> None:
    """Bug: edits skipped the approval policy. Now `approve(arguments=…)` the policy denies raises
    `EditDenied` (an `InvalidArguments`); nothing is journaled; the call still waits and can be
    approved as asked."""
    ran: list[Any] = []
    agent = _refunder(store, ran)
    paused = await agent.prompt("refund")
    before = len(await store.load(paused.run_id))
    with pytest.raises(EditDenied, match="approval policy denies"):
        await agent.approve(paused.run_id, "r1", True, arguments={"order": "A-7", "amount_usd": amount})
    assert len(await store.load(paused.run_id)) == before
    assert (await agent.state(paused.run_id)).status == "awaiting_approval"
    await agent.approve(paused.run_id, "r1", True, arguments={"order": "A-7", "amount_usd": 90})
    done = await agent.resume(paused.run_id)
    assert done.status == "completed" and ran == [90]
    [decided] = [e.data for e in await store.load(paused.run_id) if isinstance(e.data, ApprovalDecided)]
    assert decided.original_arguments == {"order": "A-7", "amount_usd": 500}
    assert decided.arguments == {"order": "A-7", "amount_usd": 90}
    assert [(e.tool, e.by, e.original, e.arguments) for e in (await agent.state(paused.run_id)).edits] == [
        ("refund", None, {"order": "A-7", "amount_usd": 500}, {"order": "A-7", "amount_usd": 90})
    ]


async def test_an_edit_approved_without_the_policy_is_denied_before_it_runs(store: EventStore) -> None:
    """Invariant: an edit recorded where the policy was not known (the store-only CLI, which has
    only the journal) is judged when the run resumes: the policy's DENY denies it, the tool never
    runs, and the model is told."""
    ran: list[Any] = []
    agent = _refunder(store, ran)
    paused = await agent.prompt("refund")
    await operations.approve(store, paused.run_id, "r1", True, arguments={"order": "A-7", "amount_usd": 50_000})
    done = await agent.resume(paused.run_id)
    assert ran == []
    events = [e.data for e in await store.load(paused.run_id)]
    [denied] = [e for e in events if isinstance(e, ToolDenied)]
    assert "approver's edited arguments" in denied.reason
    assert not [e for e in events if isinstance(e, ToolStarted)]
    assert done.status == "completed"


@pytest.mark.parametrize(
    "raw", ['{"order": "A-7", "amount_usd": ' + "9" * 401 + "}", '{"order": "A-7", "amount_usd": 1e999}',
            '{"order": "A-7", "amount_usd": NaN}', '{"order": "A-7", "amount_usd": Infinity}'],
)  # fmt: skip
async def test_the_models_numbers_no_tool_should_get_never_reach_it(store: EventStore, raw: str) -> None:
    """Invariant: the model's arguments holding a non-finite number or an integer beyond 64 bits
    are an error result the model reads; nobody is asked about them and the tool never runs."""
    ran: list[Any] = []
    done = await _refunder(store, ran, raw).prompt("refund")
    assert ran == [] and done.status == "completed"
    assert "finite" in done.final_text or "64 bits" in done.final_text or "JSON number" in done.final_text


@pytest.mark.parametrize("amount", [10**400, float("inf"), float("nan"), 2**64])
async def test_a_humans_numbers_no_tool_should_get_are_refused(store: EventStore, amount: Any) -> None:
    """Invariant: the same numbers in an approver's edit raise `InvalidArguments` naming the
    field; nothing is journaled."""
    agent = _refunder(store, [])
    paused = await agent.prompt("refund")
    before = len(await store.load(paused.run_id))
    with pytest.raises(InvalidArguments, match="amount_usd"):
        await operations.approve(store, paused.run_id, "r1", True, arguments={"order": "A-7", "amount_usd": amount})
    assert len(await store.load(paused.run_id)) == before
