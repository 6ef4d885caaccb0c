"""An approver may edit a call's arguments: what they send is checked against the tool's
schema, journaled on `approval_decided`, and is what runs, live and after recovery.

Before: `approve` took no arguments; an approver who wanted a smaller refund had to deny it and
hope the model asked again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eudaimon import Agent, tool
from eudaimon.core.codec import event_from_json
from eudaimon.core.events import ApprovalDecided, ToolStarted
from eudaimon.core.state import RunState
from eudaimon.errors import InvalidArguments, InvalidOperation
from eudaimon.stores import SqliteStore
from support.agents import calls_once


def _refunder(store: SqliteStore, refunded: list[dict[str, Any]]) -> Agent:
    @tool(effect="irreversible")
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order."""
        refunded.append({"order": order, "amount_usd": amount_usd})
        return f"refunded ${amount_usd:.2f} on {order}"

    arguments = '{"order": "A-7", "amount_usd": 550}'
    return calls_once(refund, arguments, call_id="r1", then="Result: {}".format, store=store, name="refunder")


async def test_an_approval_with_edited_arguments_runs_them_and_journals_them(tmp_path: Path) -> None:
    """Invariant: `approve(..., arguments=…)` journals the edit on `approval_decided`; the tool
    runs with it, `tool_started` records it, and a process that never saw the decision (a new
    agent on the same file) resumes to the same result."""
    refunded: list[dict[str, Any]] = []
    store = SqliteStore(str(tmp_path / "runs.db"))
    paused = await _refunder(store, refunded).prompt("refund A-7")
    assert paused.status == "awaiting_approval"
    await _refunder(store, refunded).approve(
        paused.run_id, "r1", True, by="alice", note="capped", arguments={"order": "A-7", "amount_usd": 100}
    )
    await store.close()

    reopened = SqliteStore(str(tmp_path / "runs.db"))
    done = await _refunder(reopened, refunded).resume(paused.run_id)

    assert done.status == "completed" and done.final_text == "Result: refunded $100.00 on A-7"
    assert refunded == [{"order": "A-7", "amount_usd": 100}]
    events = await reopened.load(paused.run_id)
    [decided] = [e.data for e in events if isinstance(e.data, ApprovalDecided)]
    assert decided.arguments == {"order": "A-7", "amount_usd": 100} and decided.by == "alice"
    [started] = [e.data for e in events if isinstance(e.data, ToolStarted)]
    assert started.arguments == {"order": "A-7", "amount_usd": 100}
    folded = RunState.from_events(events)
    assert folded is not None and folded.status == "completed"
    await reopened.close()


@pytest.mark.parametrize(
    ("arguments", "named"),
    [({"order": "A-7", "amount_usd": "lots"}, "amount_usd"), ({"amount_usd": 5}, "order"), (["A-7"], "JSON object")],
)
async def test_edited_arguments_the_schema_refuses_change_nothing(tmp_path: Path, arguments: Any, named: str) -> None:
    """Invariant: an edit the tool's schema refuses raises `InvalidArguments` naming the
    problem; nothing is journaled and the call still waits for a decision."""
    refunded: list[dict[str, Any]] = []
    store = SqliteStore(str(tmp_path / "runs.db"))
    agent = _refunder(store, refunded)
    paused = await agent.prompt("refund A-7")
    before = len(await store.load(paused.run_id))

    with pytest.raises(InvalidArguments, match=named):
        await agent.approve(paused.run_id, "r1", True, arguments=arguments)

    assert len(await store.load(paused.run_id)) == before
    assert (await agent.state(paused.run_id)).status == "awaiting_approval"
    await store.close()


async def test_edited_arguments_go_with_an_approval_only(tmp_path: Path) -> None:
    """Invariant: a denial carrying arguments is refused, since nothing would run with them."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    agent = _refunder(store, [])
    paused = await agent.prompt("refund A-7")
    with pytest.raises(InvalidOperation, match="approval"):
        await agent.approve(paused.run_id, "r1", False, arguments={"order": "A-7", "amount_usd": 1})
    await store.close()


def test_an_approval_journaled_before_edits_existed_still_reads() -> None:
    """Invariant: an `approval_decided` row without `arguments` (an older journal) reads back,
    as an approval of the arguments asked about."""
    row = {"v": 1, "run_id": "r", "seq": 3, "at": "2026-01-01T00:00:00+00:00", "type": "approval_decided"}
    event = event_from_json(json.dumps({**row, "call_id": "c", "approved": True, "by": "bob"}))
    assert isinstance(event.data, ApprovalDecided) and event.data.arguments is None


async def test_a_call_cut_short_after_an_edited_approval_reruns_with_the_edit(tmp_path: Path) -> None:
    """Invariant: recovery agrees with the live run. A journal that ends at the call's
    `tool_started` (the process died mid-call) resumes, in a new process, by running the
    idempotent call again with the approver's edit, not with the model's arguments."""
    ran: list[dict[str, Any]] = []

    @tool(effect="write", idempotent=True)
    def refund(order: str, amount_usd: float) -> str:
        """Refund an order (safe to repeat: the provider dedupes on the idempotency key)."""
        ran.append({"order": order, "amount_usd": amount_usd})
        return f"refunded ${amount_usd:.2f}"

    def make(store: SqliteStore) -> Agent:
        arguments = '{"order": "A-7", "amount_usd": 550}'
        policy = lambda c, t: "require_approval"  # noqa: E731
        return calls_once(
            refund, arguments, call_id="r1", then="Result: {}".format, store=store, approval_policy=policy
        )

    first = SqliteStore(str(tmp_path / "first.db"))
    paused = await make(first).prompt("refund A-7")
    await make(first).approve(paused.run_id, "r1", True, arguments={"order": "A-7", "amount_usd": 80})
    await make(first).resume(paused.run_id)
    events = await first.load(paused.run_id)
    await first.close()
    cut = next(e.seq for e in events if isinstance(e.data, ToolStarted))

    crashed = SqliteStore(str(tmp_path / "crashed.db"))
    await crashed.append(paused.run_id, 0, events[: cut + 1])  # the journal as a crash mid-call left it
    done = await make(crashed).resume(paused.run_id)

    assert done.final_text == "Result: refunded $80.00"
    assert ran == [{"order": "A-7", "amount_usd": 80}] * 2
    attempts = [e.data for e in await crashed.load(paused.run_id) if isinstance(e.data, ToolStarted)]
    edit = {"order": "A-7", "amount_usd": 80}
    assert [(a.attempt, a.arguments) for a in attempts] == [(1, edit), (2, edit)]
    await crashed.close()
