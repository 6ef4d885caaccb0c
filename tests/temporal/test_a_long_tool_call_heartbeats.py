"""A tool call longer than the heartbeat timeout lives as long as its worker beats for it.

The tool activity heartbeats every `heartbeat_every_s` while the tool runs (a timer of the
worker's loop): an idempotent WRITE call of 3 s under a 1 s heartbeat timeout completes, once,
on a worker that beats every 0.2 s, where one that beats only every 5 s has Temporal time it
out. (A READ call runs as a local activity, whose liveness is its workflow task's.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client

from eudaimon import Agent, Effect, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.url import open_store
from eudaimon.temporal import TemporalEngine, create_worker

CALLS: list[str] = []


@tool(effect=Effect.WRITE, idempotent=True)
async def slow(key: str) -> str:
    """Take three seconds."""
    CALLS.append(key)
    await asyncio.sleep(3.0)
    return "slow done"


async def _answer(request: ChatRequest) -> Message:
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        return Message.assistant(tool_calls=[ToolCall("c0", "slow", {"key": "k"})])
    return Message.assistant(f"said: {results[-1].content}")


def make_slow(**options: Any) -> Agent:
    return Agent(FunctionModel(_answer, model_id="slow"), tools=[slow], name="slow", memory=None, **options)


async def test_a_call_past_the_heartbeat_timeout_completes_while_its_worker_beats(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    done = await _prompt_slow(client, temporal_target, task_queue, store_url, heartbeat_every_s=0.2)
    assert done.status == "completed"
    assert "slow done" in done.text()
    assert CALLS == ["k"]  # never timed out and run again


async def test_a_call_whose_worker_beats_too_seldom_is_timed_out(
    client: Client, temporal_target: str, task_queue: str, store_url: str
) -> None:
    done = await _prompt_slow(client, temporal_target, task_queue, store_url, heartbeat_every_s=5.0)
    assert done.status == "completed"
    assert "slow done" not in done.text()
    assert "did not finish" in done.text()  # the model was told the call timed out


async def _prompt_slow(
    client: Client, temporal_target: str, task_queue: str, store_url: str, *, heartbeat_every_s: float
) -> Any:
    CALLS.clear()
    store = open_store(store_url)
    worker = create_worker(
        client,
        task_queue=task_queue,
        agent=make_slow(store=store),
        spec=f"{__name__}:make_slow",
        store=store,
        heartbeat_every_s=heartbeat_every_s,
    )
    async with worker:
        engine = TemporalEngine(temporal_target, task_queue=task_queue, heartbeat_timeout_s=1.0, read_attempts=1)
        agent = make_slow(store=store_url, engine=engine)
        done = await agent.prompt("go")
        await agent.aclose()
    await store.close()
    return done
