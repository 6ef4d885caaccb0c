"""A fork makes its own decisions: an approval or a retry copied from the parent does not carry over.

Bug: forking a run at its `approval_decided` event and resuming the fork sent the wire a
second time, "approved by alice" — alice approved one wire, in the parent.
"""

from __future__ import annotations

from eudaimon import Agent, tool
from eudaimon.core.digest import idempotency_key
from eudaimon.core.events import ApprovalDecided, ApprovalRequested, ToolOutcomeUnknown, ToolReconciled, ToolStarted
from eudaimon.runtime.loop.journal import RunJournal
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import MemoryStore
from support.agents import calls_once


def _payer(store: MemoryStore, sent: list[int]) -> Agent:
    @tool(effect="irreversible")
    def send_wire(amount: int) -> str:
        """Send money."""
        sent.append(amount)
        return f"sent {amount}"

    return calls_once(send_wire, {"amount": 10}, call_id="wire", store=store)


async def test_a_fork_at_an_approval_asks_again_before_the_call_runs() -> None:
    """Invariant: resuming a fork made at (or after) the parent's `approval_decided`, before the
    call ran, journals a new `approval_requested` in the fork and runs nothing; only an
    approval made in the fork lets the call run there."""
    store, sent = MemoryStore(), []
    agent = _payer(store, sent)
    parent = await agent.prompt("pay")
    await agent.approve(parent.run_id, "wire", True, by="alice")
    decided = next(e.seq for e in await store.load(parent.run_id) if isinstance(e.data, ApprovalDecided))
    child = await agent.fork(parent.run_id, decided)

    forked = await agent.resume(child)

    assert forked.status == "awaiting_approval"
    assert sent == []
    asked = [e.data for e in await store.load(child) if e.seq > decided]
    assert len(asked) == 1 and isinstance(asked[0], ApprovalRequested)
    assert f"copied from run {parent.run_id}" in asked[0].reason
    await agent.approve(child, "wire", True, by="bob")
    assert (await agent.resume(child)).status == "completed"
    assert sent == [10]
    assert (await agent.resume(parent.run_id)).status == "completed"  # the parent's own approval holds
    assert sent == [10, 10]


async def test_a_fork_denied_in_the_parent_stays_denied() -> None:
    """Invariant: a denial copied into a fork stays a denial (nothing runs without a decision)."""
    store, sent = MemoryStore(), []
    agent = _payer(store, sent)
    parent = await agent.prompt("pay")
    await agent.approve(parent.run_id, "wire", False, by="alice")
    decided = len(await store.load(parent.run_id)) - 1
    child = await agent.fork(parent.run_id, decided)
    assert (await agent.resume(child)).status == "completed"
    assert sent == []


async def test_a_fork_does_not_reuse_the_parents_retry_of_an_unknown_outcome() -> None:
    """Invariant: an operator's `retry=True` copied into a fork is not the fork's: the call is
    an unknown outcome again in the fork, and runs only after the fork's own reconciliation."""
    store, sent = MemoryStore(), []
    agent = _payer(store, sent)
    parent = await agent.prompt("pay")
    await agent.approve(parent.run_id, "wire", True, by="alice")
    # Make the call ambiguous as a crash mid-call would: its intent, then an unknown outcome.
    journal = RunJournal(store, await load_state(store, parent.run_id), snapshot_every=0)
    journal.record(
        ToolStarted(call_id="wire", tool="send_wire", idempotency_key=idempotency_key(parent.run_id, "wire"))
    )
    journal.record(ToolOutcomeUnknown(call_id="wire", tool="send_wire"))
    await journal.flush()
    await agent.reconcile(parent.run_id, "wire", retry=True, by="ops")
    retried = len(await store.load(parent.run_id)) - 1
    child = await agent.fork(parent.run_id, retried)

    forked = await agent.resume(child)

    assert forked.status == "awaiting_reconciliation"
    assert sent == []
    tail = [e.data for e in await store.load(child) if e.seq > retried]
    assert [type(d) for d in tail] == [ToolOutcomeUnknown]
    await agent.reconcile(child, "wire", retry=True, by="fork-ops")
    assert (await agent.resume(child)).status == "completed"
    assert sent == [10]
    tail = [e.data for e in await store.load(child) if e.seq > retried]
    assert not any(isinstance(d, ToolReconciled) and d.by == "ops" for d in tail)
