"""A short wait sleeps in the worker, not on a Temporal timer.

The Temporal server fires no timer sooner than `history.timerProcessorMaxTimeShift` after it was
set (1 s by default): a tool's 300 ms `RetryAfter` on a timer woke about a second late. A wait
due sooner than `_timers.SHORT_WAIT` sleeps in the worker instead (the `eudaimon.sleep_until`
local activity): its run's history holds no `TIMER_STARTED`, and the loop journals `tool_woke`
as it would after a timer. A longer wait keeps the durable timer (it holds no worker slot and
outlives every worker), and so does an approval deadline, short or not. A decision while a short
wait sleeps is still taken, when the sleep ends: the run goes on with the decision.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
import timed_fleet_agent
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from eudaimon import Agent
from eudaimon.core.errors import Cancelled
from eudaimon.core.events import ToolWaiting
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker


@contextlib.asynccontextmanager
async def _napper(client: Client, target: str, task_queue: str, store_url: str) -> AsyncIterator[Agent]:
    """A worker serving `timed_fleet_agent.make_napper` and the agent that prompts through it."""
    store = open_store(store_url)
    served = timed_fleet_agent.make_napper(store=store)
    async with create_worker(
        client, task_queue=task_queue, agent=served, spec="timed_fleet_agent:make_napper", store=store
    ):
        agent = timed_fleet_agent.make_napper(store=store_url, engine=TemporalEngine(target, task_queue=task_queue))
        yield agent
        await agent.aclose()
    await store.close()


async def _history(client: Client, run_id: str) -> list[EventType.ValueType]:
    return [e.event_type for e in (await client.get_workflow_handle(run_id).fetch_history()).events]


async def test_a_sub_second_retry_after_starts_no_temporal_timer(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`RetryAfter(0.3)`: the run waits, wakes with `tool_woke` (never before its `wake_at`) and
    runs the call again, and its history holds no Temporal timer."""
    monkeypatch.setenv("TIMED_WAIT_S", "0.3")
    async with _napper(client, temporal_target, task_queue, store_url) as agent:
        waiting = await agent.prompt("fetch the q3 report")
        assert await asyncio.wait_for(client.get_workflow_handle(waiting.run_id).result(), 30) == "completed"

        events = await agent.store.load(waiting.run_id)
        [wait] = [e.data for e in events if isinstance(e.data, ToolWaiting)]
        [woke] = [e for e in events if e.type == "tool_woke"]
        assert woke.at >= wait.wake_at
        assert [e.type for e in events].count("tool_started") == 2
        history = await _history(client, waiting.run_id)
        assert EventType.EVENT_TYPE_TIMER_STARTED not in history
        assert EventType.EVENT_TYPE_MARKER_RECORDED in history  # the sleep's local activity


async def test_a_long_wait_keeps_its_temporal_timer(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`RetryAfter(2)`: past the short-wait bound the workflow waits on a durable timer."""
    monkeypatch.setenv("TIMED_WAIT_S", "2")
    async with _napper(client, temporal_target, task_queue, store_url) as agent:
        waiting = await agent.prompt("fetch the q3 report")
        assert await asyncio.wait_for(client.get_workflow_handle(waiting.run_id).result(), 30) == "completed"
        types = [e.type for e in await agent.store.load(waiting.run_id)]
        assert types.count("tool_woke") == 1
        assert EventType.EVENT_TYPE_TIMER_STARTED in await _history(client, waiting.run_id)


async def test_a_decision_sent_during_a_short_wait_is_taken(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow is cancelled once its call is journaled waiting (0.9 s, asleep in the worker):
    the run ends cancelled. Temporal hands a workflow what arrived while its task was open once
    the task ends, so the decision is taken when the sleep ends (within `SHORT_WAIT`)."""
    monkeypatch.setenv("TIMED_WAIT_S", "0.9")
    async with _napper(client, temporal_target, task_queue, store_url) as agent:
        prompted = asyncio.ensure_future(agent.prompt("fetch the q3 report"))
        run_id = ""
        for _ in range(600):
            runs = await agent.store.list_runs()
            if runs and "tool_waiting" in [e.type for e in await agent.store.load(runs[0].run_id)]:
                run_id = runs[0].run_id
                break
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.2)  # the workflow's next task asleep (no assert on when: only what is taken)
        handle = client.get_workflow_handle(run_id)
        await handle.cancel()
        assert await asyncio.wait_for(handle.result(), 30) == "cancelled"
        with contextlib.suppress(Cancelled):  # the caller hears "waiting" or "cancelled", by when it was answered
            await asyncio.wait_for(prompted, 30)
        types = [e.type for e in await agent.store.load(run_id)]
        assert types[-1] == "run_cancelled" and types.count("run_cancelled") == 1
        print("journal:", types)
        history = await _history(client, run_id)
        print("history:", [EventType.Name(t) for t in history])
        assert EventType.EVENT_TYPE_TIMER_STARTED not in history


async def test_a_short_approval_deadline_keeps_its_temporal_timer(
    client: Client, temporal_target: str, task_queue: str, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deadline of 0.5 s waits on a timer, not asleep in the worker: a decision sent before
    the deadline must be taken before it (a sleep would hold it until the deadline had passed)."""
    monkeypatch.setenv("TIMED_APPROVAL_S", "0.5")
    store = open_store(store_url)
    served = timed_fleet_agent.make_slowpay(store=store)
    async with create_worker(
        client, task_queue=task_queue, agent=served, spec="timed_fleet_agent:make_slowpay", store=store
    ):
        agent = timed_fleet_agent.make_slowpay(
            store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue)
        )
        paused = await agent.prompt("pay ACME")
        assert await asyncio.wait_for(client.get_workflow_handle(paused.run_id).result(), 30) == "completed"
        assert [e.type for e in await agent.store.load(paused.run_id)].count("approval_timed_out") == 1
        assert EventType.EVENT_TYPE_TIMER_STARTED in await _history(client, paused.run_id)
        await agent.aclose()
    await store.close()
