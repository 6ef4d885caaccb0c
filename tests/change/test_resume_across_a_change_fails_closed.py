"""A run paused for approval under v1 and continued by v2: no call runs on a decision made about
another tool. On SQLite and PostgreSQL (the Temporal engine is not covered: see the note)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _change_agents import open_store, refunder

from eudaimon.core.events import AgentReplaced, ApprovalRequested, RunStarted, ToolCompleted
from eudaimon.errors import AgentChanged

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("kind", STORES)
async def test_a_run_records_its_agent_version_and_fingerprint(kind: str, tmp_path: Path) -> None:
    """Invariant: `run_started` carries `Agent(version=…)` and the fingerprint's named parts."""
    store, ledger = open_store(kind, tmp_path), []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        started = (await store.load(paused.run_id))[0].data
        assert isinstance(started, RunStarted)
        assert started.version == "v1"
        parts = dict(started.fingerprint)
        assert parts["tool:refund:effect"] == "write" and parts["tool:lookup:effect"] == "read"
        assert {"model", "system_prompt", "output", "tool:refund:schema"} <= parts.keys()
        assert (await v1.state(paused.run_id)).version == "v1"
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_an_approval_under_v1_is_void_under_v2_with_a_renamed_argument(kind: str, tmp_path: Path) -> None:
    """Invariant: approved under v1, resumed under v2 whose `refund` takes `cents`: the journal
    says the agent changed and how, the old call goes back to the model (its arguments no longer
    validate), the model's new call waits for a human, and nothing ran."""
    store, ledger, seen = open_store(kind, tmp_path), [], []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        assert paused.status == "awaiting_approval"
        await v1.approve(paused.run_id, "r1", True, by="alice")

        v2 = refunder(store, ledger, version="v2", renamed=True, seen=seen)
        resumed = await v2.resume(paused.run_id)

        assert ledger == []  # nothing ran
        assert resumed.status == "awaiting_approval"
        assert [c.id for c in resumed.pending_approvals] == ["r2"]  # a human is asked again
        events = [e.data for e in await store.load(paused.run_id)]
        replaced = [e for e in events if isinstance(e, AgentReplaced)]
        assert len(replaced) == 1
        assert replaced[0].previous_version == "v1" and replaced[0].version == "v2"
        assert "tool refund: schema changed" in replaced[0].changes
        told = [e for e in events if isinstance(e, ToolCompleted) and e.call_id == "r1"]
        assert told and told[0].is_error and "no longer validate" in told[0].output
        assert any("no longer validate" in text for text in seen)  # the model was told
        state = await v2.state(paused.run_id)
        assert state.version == "v2" and state.agent_changes[0][0] == "v2"

        await v2.approve(paused.run_id, "r2", True, by="bob")
        assert (await v2.resume(paused.run_id)).status == "completed"
        assert ledger == [("refund_cents", 500)]
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_an_approval_is_asked_again_when_only_the_effect_class_changed(kind: str, tmp_path: Path) -> None:
    """Invariant: arguments that still validate under v2 are not enough: the approval made about
    v1's tool is void (`agent_replaced.voided`) and a human is asked again, the reason naming
    what changed."""
    from eudaimon import Agent, tool

    store, ledger = open_store(kind, tmp_path), []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        await v1.approve(paused.run_id, "r1", True, by="alice")

        @tool(effect="irreversible")
        def refund(amount: int) -> str:
            """Refund an order, for good."""
            ledger.append(("refund", amount))
            return "refunded"

        v2: Agent[Any, Any] = Agent(v1.model, tools=[refund], store=store, name="refunds", version="v2", memory=None)
        resumed = await v2.resume(paused.run_id)

        assert ledger == [] and resumed.status == "awaiting_approval"
        events = [e.data for e in await store.load(paused.run_id)]
        replaced = next(e for e in events if isinstance(e, AgentReplaced))
        assert replaced.voided == ("r1",)
        asked = [e for e in events if isinstance(e, ApprovalRequested)]
        assert len(asked) == 2 and "effect write -> irreversible" in asked[-1].reason
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_a_removed_tool_is_told_to_the_model(kind: str, tmp_path: Path) -> None:
    """Invariant: v2 has no `refund`: the approved call does not run, the model reads that the
    tool was removed, and the run goes on without it."""
    store, ledger, seen = open_store(kind, tmp_path), [], []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        await v1.approve(paused.run_id, "r1", True, by="alice")

        v2 = refunder(store, ledger, version="v2", removed=True, seen=seen)
        resumed = await v2.resume(paused.run_id)

        assert ledger == []
        assert resumed.status == "completed"
        assert any("tool 'refund' was removed" in text for text in seen)
        replaced = next(e.data for e in await store.load(paused.run_id) if isinstance(e.data, AgentReplaced))
        assert "tool refund removed" in replaced.changes
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_a_refusing_agent_raises_agent_changed_and_records_nothing(kind: str, tmp_path: Path) -> None:
    """Invariant: `on_change="refuse"`: resume and approve raise `AgentChanged` naming the
    differences, and the journal is as it was."""
    store, ledger = open_store(kind, tmp_path), []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        before = len(await store.load(paused.run_id))

        v2 = refunder(store, ledger, version="v2", renamed=True, on_change="refuse")
        with pytest.raises(AgentChanged) as raised:
            await v2.resume(paused.run_id)
        assert raised.value.run_id == paused.run_id
        assert "tool refund: schema changed" in raised.value.changes
        assert "v1 -> v2" in str(raised.value)
        with pytest.raises(AgentChanged):
            await v2.approve(paused.run_id, "r1", True)

        assert len(await store.load(paused.run_id)) == before
        assert ledger == []
        assert (await v1.state(paused.run_id)).status == "awaiting_approval"
    finally:
        await store.close()


@pytest.mark.parametrize("kind", STORES)
async def test_an_approval_by_a_changed_agent_journals_the_change_first(kind: str, tmp_path: Path) -> None:
    """Invariant: v2 approving a call v1 asked about journals `agent_replaced` before its
    decision, so the approval is made about the call as v2 sees it; a call whose arguments v2
    refuses is told to the model instead, and cannot be approved."""
    from eudaimon.core.events import ApprovalDecided
    from eudaimon.errors import InvalidOperation

    store, ledger = open_store(kind, tmp_path), []
    try:
        v1 = refunder(store, ledger, version="v1")
        paused = await v1.prompt("refund order 7")
        v2 = refunder(store, ledger, version="v2", renamed=True)
        with pytest.raises(InvalidOperation):
            await v2.approve(paused.run_id, "r1", True, by="bob")
        types = [e.data for e in await store.load(paused.run_id)]
        assert any(isinstance(e, AgentReplaced) for e in types)
        assert not any(isinstance(e, ApprovalDecided) for e in types)
        assert ledger == []
    finally:
        await store.close()
