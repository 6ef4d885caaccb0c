"""How soon a cancel closes the model call it interrupts, on the wire, and ends the run.

A provider on a real socket on 127.0.0.1 (`tests/providers/_slow_server.py`, in this process's
threads) takes its time: it answers nothing (`generate`) or streams a token every 50 ms
(`stream`), and notes, on `time.monotonic()`, when its client hangs up. A run is started
through the official SDK (`OpenAIModel`, `AnthropicModel`), and once the request has arrived
(and, streaming, three tokens have gone out) it is cancelled:

- `token`: `CancellationToken.cancel()` in the driving process;
- `request`: `operations.cancel(store, …)`, what `eudaimon runs cancel` and `POST …/cancel` do
  for a run another process drives: a request in the store, seen by the driver's poll.

Reported per case, over 20 runs: the time from the cancel to the server seeing the connection
close (`wire`), and to `prompt` returning the cancelled run (`run`), p50 and p99 (with 20 tries,
p99 is the slowest). A request is seen within the poll interval (`CANCEL_POLL_S`, 1 s) plus one
look of the waiting run.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import _harness as h

ROUNDS = 1
sys.path.insert(0, str(h.REPO / "tests" / "providers"))


def _model(server: Any) -> Any:
    from eudaimon.models.anthropic import AnthropicModel
    from eudaimon.models.openai import OpenAIModel

    if server.wire == "openai":
        return OpenAIModel("gpt-slow", api_key="sk-bench", base_url=server.url)
    return AnthropicModel("claude-slow", api_key="sk-ant-bench", base_url=server.url)


async def _drive(agent: Any, run_id: str, stream: bool, token: Any) -> str:
    from eudaimon.errors import Cancelled

    if stream:
        status = ""
        async for event in agent.prompt_stream("write", run_id=run_id, cancel=token):
            status = getattr(event, "status", status)
        return status
    try:
        return (await agent.prompt("write", run_id=run_id, cancel=token)).status.value
    except Cancelled:
        return "cancelled"


async def _one(server: Any, agent: Any, n: int, stream: bool, how: str) -> tuple[float, float]:
    from eudaimon import CancellationToken
    from eudaimon.runtime.process import operations

    store = agent.store
    token = CancellationToken() if how == "token" else None
    before = len(server.calls)
    run = asyncio.ensure_future(_drive(agent, f"r{n}", stream, token))
    while len(server.calls) == before or (stream and server.calls[-1].tokens_sent < 3):
        await asyncio.sleep(0.002)
    call = server.calls[-1]
    began = time.monotonic()
    if token is not None:
        token.cancel("benchmark", by="bench")
    else:
        await operations.cancel(store, f"r{n}", reason="benchmark", by="bench")
    status = await run
    ended = time.monotonic()
    await asyncio.to_thread(call.hung_up.wait, 30)
    assert status == "cancelled" and call.hung_up_at is not None, (status, call)
    return call.hung_up_at - began, ended - began


async def cases(tries: int) -> dict[str, float]:
    from _slow_server import SlowProvider

    from eudaimon import Agent
    from eudaimon.stores import MemoryStore

    figures: dict[str, float] = {}
    for how in ("token", "request"):
        for wire in ("openai", "anthropic"):
            for stream in (False, True):
                server = SlowProvider(wire)
                agent = Agent(_model(server), store=MemoryStore(), memory=None)
                closed: list[float] = []
                returned: list[float] = []
                try:
                    for n in range(tries):
                        wire_s, run_s = await _one(server, agent, n, stream, how)
                        closed.append(wire_s * 1e3)
                        returned.append(run_s * 1e3)
                finally:
                    await agent.aclose()
                    server.close()
                case = f"{wire}, {'stream' if stream else 'generate'}, {how}"
                figures[f"{case} / wire p50 ms"] = h.median(closed)
                figures[f"{case} / wire p99 ms"] = h.percentile(closed, 0.99)
                figures[f"{case} / run p50 ms"] = h.median(returned)
                figures[f"{case} / run p99 ms"] = h.percentile(returned, 0.99)
    return figures


def measure(quick: bool) -> dict[str, float]:
    h.requires("openai", "anthropic")
    return h.run_on_thread(lambda: cases(3 if quick else 20))
