"""The fleet workload `benchmarks/fleet.py` measures, for eudaimon and Pydantic AI, and their workers.

Each run: the model is called twice (50 ms each, a function of the conversation), the first
time asking for one READ tool call. A worker of either framework runs in a process of its
own, so that its CPU time and peak memory are its alone (Pydantic AI's workflow is in
`fleet_pai`, a module that imports no eudaimon, which its sandbox would import per run):

    python -m peers.fleet_loop eudaimon TARGET QUEUE STORE_URL
    python -m peers.fleet_loop pydantic-ai TARGET QUEUE
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from eudaimon import Agent, Effect, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel

MODEL_S = 0.05


@tool(effect=Effect.READ)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def answer(request: ChatRequest) -> Message:
    await asyncio.sleep(MODEL_S)
    if not any(m.role == "tool" for m in request.messages):
        return Message.assistant(tool_calls=[ToolCall("c0", "lookup", {"key": "k"})])
    return Message.assistant("looked it up")


def make(**options: Any) -> Agent:
    """The eudaimon agent (the worker calls it with its store)."""
    return Agent(
        FunctionModel(answer, model_id="fleet-bench"), tools=[lookup], name="fleet-bench", memory=None, **options
    )


async def _eudaimon_worker(target: str, queue: str, store_url: str) -> None:
    from temporalio.client import Client

    from eudaimon.stores.url import open_store
    from eudaimon.temporal import create_worker

    client = await Client.connect(target)
    store = open_store(store_url)
    agent = make(store=store)
    worker = create_worker(client, task_queue=queue, agent=agent, spec="peers.fleet_loop:make", store=store)
    print("ready", flush=True)
    await worker.run()


async def _pydantic_ai_worker(target: str, queue: str) -> None:
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin
    from temporalio.client import Client
    from temporalio.worker import Worker

    from peers.fleet_pai import PydanticAIFleet, p_temporal

    client = await Client.connect(target, plugins=[PydanticAIPlugin()])
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[PydanticAIFleet],
        plugins=[AgentPlugin(p_temporal)],
        max_cached_workflows=2000,
    )
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    kind, target, queue = sys.argv[1:4]
    if os.environ.get("FLEET_SAMPLE"):  # a profile of this worker (`_sampler`)
        import _sampler

        _sampler.start(f"{os.environ['FLEET_SAMPLE']}-{kind}.txt")
    if kind == "eudaimon" and os.environ.get("FLEET_CPROFILE"):  # the event loop's thread, profiled
        import cProfile
        import signal

        profile = cProfile.Profile()

        def dump(*_: object) -> None:
            profile.disable()
            profile.dump_stats(os.environ["FLEET_CPROFILE"])
            os._exit(0)

        signal.signal(signal.SIGTERM, dump)
        profile.enable()
        asyncio.run(_eudaimon_worker(target, queue, sys.argv[4]))
    elif kind == "eudaimon":
        asyncio.run(_eudaimon_worker(target, queue, sys.argv[4]))
    else:
        asyncio.run(_pydantic_ai_worker(target, queue))
