"""Approval deadlines and durable waits on Temporal: the workflow keeps its own time.

While a call awaits approval with a deadline, or waits after a tool's `RetryAfter`, the
workflow waits on a decision OR a durable Temporal timer (no worker slot held; the store's
sweepers leave engine-driven runs alone). When the timer fires, the loop journals
`approval_timed_out` (the call denied, the model told) or `tool_woke` (the call runs again,
same idempotency key, next attempt) exactly once, through the `eudaimon.append` activity.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import timed_fleet_agent
from temporalio.client import Client

from eudaimon.core.events import ApprovalDecided, ApprovalRequested, ApprovalTimedOut, ToolWaiting
from eudaimon.errors import DeadlinePassed
from eudaimon.runtime.process import timers
from eudaimon.stores.base import EventStore
from eudaimon.stores.postgres import PostgresStore
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker

PG_DSN = os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


@contextlib.asynccontextmanager
async def _worker(client: Client, task_queue: str, store_url: str | EventStore, name: str) -> AsyncIterator[None]:
    store = open_store(store_url) if isinstance(store_url, str) else store_url
    agent = getattr(timed_fleet_agent, name)(store=store)
    async with create_worker(client, task_queue=task_queue, agent=agent, spec=f"timed_fleet_agent:{name}", store=store):
        yield
    if isinstance(store_url, str):
        await store.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def journal(request: pytest.FixtureRequest, store_url: str) -> AsyncIterator[str | EventStore]:
    """The journal the fleet writes: a SQLite file (its URL), or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield store_url
        return
    schema = f"eudaimon_ttime_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(PG_DSN, schema=schema, min_size=1, max_size=4)
    yield store
    await store.close()
    async with await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as conn:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def _types(agent: object, run_id: str) -> list[str]:
    return [e.type for e in await agent.store.load(run_id)]  # type: ignore[attr-defined]


async def test_a_deadline_fires_on_temporal_and_the_model_is_told(
    client: Client, temporal_target: str, task_queue: str, journal: str | EventStore
) -> None:
    """Nobody decides: the workflow's timer fires at the deadline, `approval_timed_out` is
    journaled once, the call is denied without running and the model reads why."""
    async with _worker(client, task_queue, journal, "make_slowpay"):
        agent = timed_fleet_agent.make_slowpay(
            store=journal, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        paused = await agent.prompt("pay ACME")
        assert paused.status == "awaiting_approval"
        [asked] = [e.data for e in await agent.store.load(paused.run_id) if isinstance(e.data, ApprovalRequested)]
        assert asked.deadline is not None

        result = await asyncio.wait_for(client.get_workflow_handle(paused.run_id).result(), 30)

        assert result == "completed"
        state = await agent.state(paused.run_id)
        assert state.output == "the tool said: Tool call denied: denied by deadline: no decision within 1.5s"
        events = await agent.store.load(paused.run_id)
        [fired] = [e for e in events if isinstance(e.data, ApprovalTimedOut)]
        assert fired.data.action == "deny"  # type: ignore[union-attr]
        assert fired.at >= asked.deadline  # never before its time
        types = [e.type for e in events]
        assert "tool_started" not in types and "approval_decided" not in types
        assert await timers.fire_due(agent.store) == []  # a server's sweep leaves the workflow's run be
        assert [e.type for e in await agent.store.load(paused.run_id)] == types
        await agent.aclose()


async def test_a_late_approval_is_refused_on_temporal(
    client: Client,
    temporal_target: str,
    task_queue: str,
    store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the deadline fired (the run has gone on: the model asks again), an approval of the
    first call is refused as `DeadlinePassed`, by the caller and by the workflow itself (sent
    straight to it): the call never runs, nothing of the late decision is journaled."""
    gate = tmp_path / "gate"
    gate.touch()  # the model's second ask waits here, so the timed-out call is the run's current one
    monkeypatch.setenv("TIMED_GATE", str(gate))
    async with _worker(client, task_queue, store_url, "make_slowpay"):
        engine = TemporalEngine(temporal_target, task_queue=task_queue)
        agent = timed_fleet_agent.make_slowpay(store=store_url, engine=engine)
        paused = await agent.prompt("pay ACME, and again if denied")
        [call] = paused.pending_approvals
        for _ in range(200):  # the workflow's timer fires the first deadline; the model asks again
            if "approval_timed_out" in await _types(agent, paused.run_id):
                break
            await asyncio.sleep(0.05)

        with pytest.raises(DeadlinePassed, match="deadline passed"):
            await agent.approve(paused.run_id, call.id, True, by="late")
        with pytest.raises(DeadlinePassed, match="deadline passed"):
            await engine.decide(agent.store, paused.run_id, ApprovalDecided(call_id=call.id, approved=True, by="late"))
        gate.unlink()

        assert await asyncio.wait_for(client.get_workflow_handle(paused.run_id).result(), 30) == "completed"
        types = await _types(agent, paused.run_id)
        assert types.count("approval_timed_out") == 2  # the second ask timed out too
        assert "approval_decided" not in types and "tool_started" not in types
        await agent.aclose()


async def test_an_approval_in_time_beats_the_deadline_on_temporal(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An approval before the deadline runs the call; the timer that was set fires nothing."""
    monkeypatch.setenv("TIMED_APPROVAL_S", "20")
    async with _worker(client, task_queue, store_url, "make_slowpay"):
        agent = timed_fleet_agent.make_slowpay(
            store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        paused = await agent.prompt("pay ACME")
        [call] = paused.pending_approvals
        await agent.approve(paused.run_id, call.id, True, by="ops")
        assert await asyncio.wait_for(client.get_workflow_handle(paused.run_id).result(), 30) == "completed"
        assert (await agent.state(paused.run_id)).output == "the tool said: sent 120.0 to ACME"
        assert "approval_timed_out" not in await _types(agent, paused.run_id)
        await agent.aclose()


async def test_a_deadline_may_cancel_the_run_on_temporal(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`on_approval_timeout="cancel"`: the deadline cancels the run, by the deadline."""
    monkeypatch.setenv("TIMED_ON_TIMEOUT", "cancel")
    async with _worker(client, task_queue, store_url, "make_slowpay"):
        agent = timed_fleet_agent.make_slowpay(
            store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        paused = await agent.prompt("pay ACME")
        assert await asyncio.wait_for(client.get_workflow_handle(paused.run_id).result(), 30) == "cancelled"
        types = await _types(agent, paused.run_id)
        assert types.count("approval_timed_out") == 1 and types[-1] == "run_cancelled"
        await agent.aclose()


async def test_a_retry_after_wakes_on_temporal(
    client: Client, temporal_target: str, task_queue: str, journal: str | EventStore
) -> None:
    """A tool's `RetryAfter(2)` on a worker (past `_timers.SHORT_WAIT`, which sleeps in the
    worker): the run is `waiting` with its `wake_at`, the
    workflow sleeps on a Temporal timer, then journals `tool_woke` and runs the call again with
    the same idempotency key and the next attempt."""
    async with _worker(client, task_queue, journal, "make_napper"):
        agent = timed_fleet_agent.make_napper(
            store=journal, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        waiting = await agent.prompt("fetch the q3 report")
        assert waiting.status == "waiting"
        [wait] = [e.data for e in await agent.store.load(waiting.run_id) if isinstance(e.data, ToolWaiting)]
        assert wait.attempt == 1 and wait.wake_at > datetime.now(UTC).replace(microsecond=0)

        assert await asyncio.wait_for(client.get_workflow_handle(waiting.run_id).result(), 30) == "completed"

        events = await agent.store.load(waiting.run_id)
        types = [e.type for e in events]
        assert types.count("tool_waiting") == 1 and types.count("tool_woke") == 1
        [woke] = [e for e in events if e.type == "tool_woke"]
        assert woke.at >= wait.wake_at
        started = [e.data for e in events if e.type == "tool_started"]
        assert [s.attempt for s in started] == [1, 2]  # type: ignore[union-attr]
        assert len({s.idempotency_key for s in started}) == 1  # type: ignore[union-attr]
        output = (await agent.state(waiting.run_id)).output
        assert output is not None and output.startswith("the tool said: report q3 (attempt 2, key ")
        await agent.aclose()


async def test_a_wait_outlives_its_worker_on_temporal(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker is held while the call waits: the worker that saw `RetryAfter` stops, the
    wake time passes with no worker at all, and a new worker runs the woken call."""
    monkeypatch.setenv("TIMED_WAIT_S", "2")  # a durable timer's wait (a shorter one sleeps in the worker)
    engine = TemporalEngine(temporal_target, task_queue=task_queue)
    async with _worker(client, task_queue, store_url, "make_napper"):
        agent = timed_fleet_agent.make_napper(store=store_url, engine=engine)
        waiting = await agent.prompt("fetch the q3 report")
        assert waiting.status == "waiting"
    await asyncio.sleep(2.5)  # the wake time passes while no worker serves the queue
    assert "tool_woke" not in await _types(agent, waiting.run_id)
    async with _worker(client, task_queue, store_url, "make_napper"):
        assert await asyncio.wait_for(client.get_workflow_handle(waiting.run_id).result(), 30) == "completed"
    types = await _types(agent, waiting.run_id)
    assert types.count("tool_woke") == 1 and types.count("tool_started") == 2
    await agent.aclose()


async def test_cancelling_a_waiting_run_on_temporal_fires_nothing(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelling the workflow of a waiting run cancels it at once; its timer wakes nothing."""
    monkeypatch.setenv("TIMED_WAIT_S", "2")  # on a timer: a shorter wait sleeps in the worker
    async with _worker(client, task_queue, store_url, "make_napper"):
        agent = timed_fleet_agent.make_napper(
            store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        waiting = await agent.prompt("fetch the q3 report")
        handle = client.get_workflow_handle(waiting.run_id)
        await handle.cancel()
        assert await asyncio.wait_for(handle.result(), 30) == "cancelled"
        await asyncio.sleep(2.2)
        types = await _types(agent, waiting.run_id)
        assert "tool_woke" not in types and types[-1] == "run_cancelled"
        await agent.aclose()
