"""A run of a thread asks the store for its leases as often as a run of none.

Issue 40: with a thread (what every server-started run has), a run took the thread's lease,
then its own, and gave them up in turn: two round trips to the store more per run than a run
without a thread, each a transaction of the SQLite worker (read_commits: 4 lease transactions
per run against 2). A prompt now takes its run's lease together with its thread's, and the
driver gives both up together once memory is fed. A run the server starts (queued, then
started by its thread's drainer) took its thread's lease alone and its own later: 3 round trips
against a prompt's 2 on a SQLite file, until it took both together as a prompt does.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from eudaimon import Agent
from eudaimon.errors import LeaseHeld
from eudaimon.models import FunctionModel, ScriptedModel
from eudaimon.runtime.process.threads import hold_thread
from eudaimon.server import create_app
from support.stores import LeaseTripCountingSqliteStore, LeaseTripCountingStore


async def _trips(*, memory: bool, thread_id: str | None, stream: bool = False) -> int:
    store = LeaseTripCountingStore()
    options = {} if memory else {"memory": None}
    agent = Agent(ScriptedModel(["one"]), store=store, **options)  # type: ignore[arg-type]
    if stream:
        async for _ in agent.prompt_stream("hi", thread_id=thread_id):
            pass
    else:
        assert (await agent.prompt("hi", thread_id=thread_id)).status == "completed"
    return store.lease_trips


@pytest.mark.parametrize("stream", [False, True], ids=["prompt", "prompt_stream"])
async def test_a_run_of_a_thread_costs_the_lease_round_trips_of_a_run_of_none(stream: bool) -> None:
    """Invariant: a prompt's leases cost the store two round trips (take, give up), whether or
    not the run belongs to a thread: the thread's lease travels with the run's own."""
    alone = await _trips(memory=False, thread_id=None, stream=stream)
    assert alone == 2
    assert await _trips(memory=False, thread_id="t", stream=stream) == alone
    assert await _trips(memory=True, thread_id="t", stream=stream) == alone
    assert await _trips(memory=True, thread_id=None, stream=stream) == alone  # the agent's default thread


async def test_a_prompt_refused_its_thread_holds_no_lease_of_its_run() -> None:
    """Invariant: the thread's lease and the run's are taken all or none: a prompt that may not
    wait for a busy thread fails with `LeaseHeld` and leaves its run's lease free, and the
    thread, once free, serves the next prompt with the history of the runs before."""
    store = LeaseTripCountingStore()
    agent = Agent(FunctionModel(lambda request: f"re: {request.messages[-1].content}"), store=store)
    await agent.prompt("first", thread_id="t")
    busy = await hold_thread(store, "t")  # another process's run holds the thread
    with pytest.raises(LeaseHeld, match="thread:t"):
        await agent.prompt("refused", thread_id="t", run_id="refused", wait=False)
    assert await store.acquire_lease("run:refused", "someone else", 30.0) is not None
    await busy.release()
    answer = await agent.prompt("second", thread_id="t")
    assert [m.content for m in answer.messages] == ["first", "re: first", "second", "re: second"]


async def test_a_run_the_server_starts_on_a_thread_costs_the_lease_round_trips_of_a_prompt(tmp_path: Path) -> None:
    """Invariant: on a SQLite file, a run started over HTTP on a thread (journaled as queued,
    then started by the thread's drainer) costs the store the two lease round trips of a prompt
    on no thread: it takes its own lease with its thread's, as a prompt does."""
    prompted = LeaseTripCountingSqliteStore(tmp_path / "prompted.db")
    agent = Agent(ScriptedModel(["one"]), store=prompted, memory=None)
    assert (await agent.prompt("hi")).status == "completed"
    await prompted.close()
    assert prompted.lease_trips == 2

    store = LeaseTripCountingSqliteStore(tmp_path / "served.db")
    served = Agent(ScriptedModel(["one"]), store=store, name="bot")
    app = create_app(served, store, recover=False, fire_schedules=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            answer = await http.post("/v1/agents/bot/runs?wait=true", json={"input": "hi", "thread_id": "t"})
    await store.close()
    assert answer.status_code == 200 and answer.json()["status"] == "completed", answer.text
    assert answer.json()["thread_id"] == "t"
    assert store.lease_trips == prompted.lease_trips
