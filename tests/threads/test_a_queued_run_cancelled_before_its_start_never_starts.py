"""A queued run whose starter was cancelled before it began is cancelled where it stands.

A queued run's starter takes the run's own lease with its thread's (one round trip, as a
prompt does). `cancel` journals `run_cancelled` only under the run's lease, so a starter that
finds its cancel fired once it holds both must give the run's lease up first: else the cancel
is left as a request and the run starts anyway, its `run_started` journaled before it stops.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent
from eudaimon.core.events import RunQueued
from eudaimon.errors import Cancelled
from eudaimon.models import ScriptedModel
from eudaimon.runtime.loop.cancel import CancellationToken
from eudaimon.runtime.process.queued import enqueue
from eudaimon.stores import SqliteStore


async def test_a_queued_run_whose_cancel_fired_before_it_began_is_cancelled_never_started(tmp_path: Path) -> None:
    """Invariant: resuming a queued run with a cancel already fired journals `run_cancelled`
    right after its `run_queued`: the model is never asked, and the thread's leases are free."""
    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(ScriptedModel(["never"]), store=store, name="bot")
    await enqueue(store, "r1", RunQueued(agent="bot", input="hi", thread_id="t", memory_thread="t"))
    cancel = CancellationToken()
    cancel.cancel("sent twice", by="alice")
    with pytest.raises(Cancelled):
        await agent.resume("r1", cancel=cancel)
    events = await store.load("r1")
    assert [e.type for e in events] == ["run_queued", "run_cancelled"]
    assert (await agent.prompt("next", thread_id="t", wait=False)).status == "completed"
    await store.close()
