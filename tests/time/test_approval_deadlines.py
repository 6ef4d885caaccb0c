"""Approval deadlines: journaled with the question, fired once by whichever process looks, the
call denied (the model told "no decision within …") or the run cancelled; a late decision refused.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from _time_support import Opener, payer

from eudaimon import ToolCall
from eudaimon.core.events import ApprovalDecided, ApprovalRequested, ApprovalTimedOut, RunCancelled, ToolDenied
from eudaimon.errors import DeadlinePassed, InvalidOperation
from eudaimon.runtime.process import timers
from eudaimon.stores.base import EventStore
from eudaimon.tools import RequireApproval, ToolPolicy

TIMEOUT_S = 0.6


async def _types(store: EventStore, run_id: str) -> list[str]:
    return [e.type for e in await store.load(run_id)]


async def _past(deadline: datetime) -> None:
    await asyncio.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 0.05)


async def test_a_deadline_with_no_decision_denies_the_call_and_tells_the_model(open_store: Opener) -> None:
    """Invariant: the deadline is on `approval_requested`; before it nothing fires; after it one
    sweep journals `approval_timed_out`, and the resumed run shows the model the denial with
    "no decision within 0.6s"."""
    store, seen = open_store(), []
    agent = payer(store, seen, approval_timeout_s=TIMEOUT_S)
    paused = await agent.prompt("pay")
    assert paused.status == "awaiting_approval"
    [asked] = [e.data for e in await store.load(paused.run_id) if isinstance(e.data, ApprovalRequested)]
    assert asked.deadline is not None and asked.on_timeout == "deny"
    assert await timers.fire_due(store) == []

    await _past(asked.deadline)
    fired = await timers.fire_due(open_store())  # another process's view of the same journal

    assert [f.run_id for f in fired] == [paused.run_id]
    assert await timers.fire_due(store) == []  # fired once
    done = await agent.resume(paused.run_id)
    assert done.status == "completed"
    assert seen == ["Tool call denied: denied by deadline: no decision within 0.6s"]
    types = await _types(store, paused.run_id)
    assert types.count("approval_timed_out") == 1 and "tool_started" not in types


async def test_a_tool_deadline_overrides_the_agents_and_a_policy_may_set_one(open_store: Opener) -> None:
    """Invariant: `@tool(approval_timeout_s=…)` wins over `Agent(approval_timeout_s=…)`; a policy's
    `RequireApproval(timeout_s, on_timeout)` wins over both."""
    store = open_store()
    agent = payer(store, [], approval_timeout_s=3600, tool_timeout=60)
    run = await agent.prompt("pay")
    [asked] = [e.data for e in await store.load(run.run_id) if isinstance(e.data, ApprovalRequested)]
    assert asked.deadline is not None
    assert timedelta(seconds=55) < asked.deadline - datetime.now(UTC) <= timedelta(seconds=60)

    def policy(call: ToolCall, tool: object) -> RequireApproval | ToolPolicy:
        return RequireApproval(timeout_s=5, on_timeout="cancel")

    ruled = payer(store, [], approval_timeout_s=3600, approval_policy=policy)
    run = await ruled.prompt("pay")
    [asked] = [e.data for e in await store.load(run.run_id) if isinstance(e.data, ApprovalRequested)]
    assert asked.deadline is not None and asked.on_timeout == "cancel"
    assert asked.deadline - datetime.now(UTC) <= timedelta(seconds=5)


async def test_on_approval_timeout_cancel_cancels_the_run(open_store: Opener) -> None:
    """Invariant: with `on_approval_timeout="cancel"` the deadline journals `approval_timed_out`
    then `run_cancelled` by "deadline"; the run is cancelled and its tool never ran."""
    store = open_store()
    agent = payer(store, [], approval_timeout_s=TIMEOUT_S, on_approval_timeout="cancel")
    paused = await agent.prompt("pay")
    await asyncio.sleep(TIMEOUT_S + 0.1)

    [fired] = await timers.fire_due(store)

    assert fired.state.status == "cancelled"
    events = [e.data for e in await store.load(paused.run_id)]
    assert isinstance(events[-2], ApprovalTimedOut) and events[-2].action == "cancel"
    assert isinstance(events[-1], RunCancelled) and events[-1].by == "deadline"


async def test_a_decision_after_the_deadline_is_refused(open_store: Opener) -> None:
    """Invariant: approving after the deadline raises `DeadlinePassed` (an `InvalidOperation`)
    saying the deadline passed, even before any sweep fired it; the timeout is then journaled
    once, and no `approval_decided`."""
    store = open_store()
    agent = payer(store, [], approval_timeout_s=TIMEOUT_S)
    paused = await agent.prompt("pay")
    await asyncio.sleep(TIMEOUT_S + 0.1)

    with pytest.raises(DeadlinePassed, match="deadline passed"):
        await agent.approve(paused.run_id, "w", True, by="alice")
    with pytest.raises(DeadlinePassed):
        await agent.approve(paused.run_id, "w", False, by="bob")

    types = await _types(store, paused.run_id)
    assert types.count("approval_timed_out") == 1 and "approval_decided" not in types


async def test_one_decision_of_two_racing_a_deadline_wins(open_store: Opener) -> None:
    """Invariant: two people deciding (from two processes' stores) and a sweep, all at the
    deadline, over 8 runs: each run's journal holds exactly one of `approval_decided` and
    `approval_timed_out`; every loser was refused (InvalidOperation / DeadlinePassed) or found
    nothing to fire."""
    first, second, sweeper = open_store(), open_store(), open_store()
    agent = payer(first, [], approval_timeout_s=0.4)
    other = payer(second, [], approval_timeout_s=0.4)
    winners: list[str] = []
    for _ in range(8):
        paused = await agent.prompt("pay")
        [asked] = [e.data for e in await first.load(paused.run_id) if isinstance(e.data, ApprovalRequested)]
        assert asked.deadline is not None
        await asyncio.sleep(max(0.0, (asked.deadline - datetime.now(UTC)).total_seconds() - 0.002))
        outcomes = await asyncio.gather(
            agent.approve(paused.run_id, "w", True, by="alice"),
            other.approve(paused.run_id, "w", False, by="bob"),
            timers.fire(sweeper, paused.run_id),
            return_exceptions=True,
        )
        for outcome in outcomes[:2]:
            assert not isinstance(outcome, BaseException) or isinstance(outcome, InvalidOperation), outcome
        events = [e.data for e in await first.load(paused.run_id)]
        decided = [e for e in events if isinstance(e, ApprovalDecided | ApprovalTimedOut)]
        assert len(decided) == 1, decided
        winners.append(type(decided[0]).__name__)
        wins = sum(1 for o in outcomes[:2] if not isinstance(o, BaseException))
        assert wins == (1 if isinstance(decided[0], ApprovalDecided) else 0)
    assert not any(isinstance(e, ToolDenied) for e in [])  # nothing ran the run on here
