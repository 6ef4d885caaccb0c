"""Cancelling a run from outside the process that drives it: the journal says who cancelled.

Two `SqliteStore` handles on one file stand for two processes (the server tests do it with
real processes): only the lease holder appends, so the canceller leaves a request that the
driving loop journals, or, when nobody drives the run, journals `run_cancelled` itself.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eudaimon import Agent, CancellationToken, Message, ToolCall, tool
from eudaimon.core.events import RunCancelled
from eudaimon.errors import Cancelled, InvalidOperation
from eudaimon.models import FunctionModel, ScriptedModel
from eudaimon.models.base import ChatRequest
from eudaimon.runtime.loop.cancel_requests import CancelRequest, read_cancel_request, request_cancel
from eudaimon.runtime.process import operations
from eudaimon.stores import SqliteStore


@tool(effect="read")
async def tick() -> str:
    """One small step."""
    await asyncio.sleep(0.02)
    return "tick"


@tool(effect="irreversible")
def pay(amount: int) -> str:
    """Pay."""
    return f"paid {amount}"


def _forever(request: ChatRequest) -> Message:
    return Message.assistant(tool_calls=[ToolCall(f"t{len(request.messages)}", "tick", {})])


async def _wait_for_events(store: SqliteStore, run_id: str, count: int) -> None:
    for _ in range(2000):
        if len(await store.load(run_id)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"run {run_id} never reached {count} events")


async def test_a_run_driven_elsewhere_is_cancelled_by_its_own_driver(tmp_path: Path) -> None:
    """Invariant: a cancel from another store handle while the run is driven (its lease held)
    is journaled by the driver as `run_cancelled` with the canceller's `by`; nothing else
    appends to the run meanwhile (no ConcurrencyConflict ends the driver)."""
    path = str(tmp_path / "runs.db")
    driver_store, other = SqliteStore(path), SqliteStore(path)
    agent = Agent(FunctionModel(_forever), tools=[tick], store=driver_store, max_iterations=400)
    task = asyncio.create_task(agent.prompt("go", run_id="r1"))
    await _wait_for_events(other, "r1", 6)
    assert await operations.cancel(other, "r1", reason="stop it", by="alice") is None  # left for the driver
    with pytest.raises(Cancelled):
        await task
    last = (await other.load("r1"))[-1].data
    assert last == RunCancelled(reason="stop it", by="alice")
    await driver_store.close()
    await other.close()


async def test_a_run_nobody_drives_is_cancelled_at_once(tmp_path: Path) -> None:
    """Invariant: a run waiting for approval (no lease held) is cancelled by the canceller itself,
    `by` journaled; cancelling it again, or any ended run, is refused with InvalidOperation."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    agent = Agent(
        ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "pay", {"amount": 5})])]), tools=[pay], store=store
    )
    response = await agent.prompt("pay", run_id="r2")
    assert response.status == "awaiting_approval"
    state = await operations.cancel(store, "r2", reason="wrong invoice", by="bob")
    assert state is not None and state.status == "cancelled"
    assert (await store.load("r2"))[-1].data == RunCancelled(reason="wrong invoice", by="bob")
    with pytest.raises(InvalidOperation, match="cancelled"):
        await operations.cancel(store, "r2", by="bob")
    await store.close()


async def test_a_request_left_while_paused_cancels_the_resumed_run(tmp_path: Path) -> None:
    """Bug guarded: a request left while a driver was letting go (the run paused before it looked)
    was lost; a resumed run reads the request before its first model call."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    script = [Message.assistant(tool_calls=[ToolCall("c1", "pay", {"amount": 5})]), "done"]
    agent = Agent(ScriptedModel(script), tools=[pay], store=store)
    await agent.prompt("pay", run_id="r3")
    await agent.approve("r3", "c1", by="ann")
    await request_cancel(store, "r3", CancelRequest(reason="changed my mind", by="carol"))
    with pytest.raises(Cancelled):
        await agent.resume("r3")
    assert (await store.load("r3"))[-1].data == RunCancelled(reason="changed my mind", by="carol")
    await store.close()


async def test_the_first_request_is_kept(tmp_path: Path) -> None:
    """Invariant: a second request does not overwrite who asked first."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    await request_cancel(store, "r4", CancelRequest(reason="first", by="a"))
    await request_cancel(store, "r4", CancelRequest(reason="second", by="b"))
    assert await read_cancel_request(store, "r4") == CancelRequest(reason="first", by="a")
    await store.close()


async def test_a_token_names_who_cancelled(tmp_path: Path) -> None:
    """Invariant: `CancellationToken.cancel(reason, by=…)` journals `by`; without `by` the event
    is as before (no `by`)."""
    for by in ("dora", None):
        store = SqliteStore(str(tmp_path / f"{by}.db"))
        token = CancellationToken()
        token.cancel("enough", by=by)
        agent = Agent(FunctionModel(_forever), tools=[tick], store=store)
        with pytest.raises(Cancelled):
            await agent.prompt("go", run_id="r5", cancel=token)
        assert (await store.load("r5"))[-1].data == RunCancelled(reason="enough", by=by)
        await store.close()
