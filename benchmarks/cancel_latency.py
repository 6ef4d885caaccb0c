"""How soon a cancel closes the model call it interrupts, on the wire (issue 26).

A provider on a real socket on 127.0.0.1 (`tests/providers/_slow_server.py`, in this process's
threads) takes its time: it answers nothing (`generate`) or streams a token every 50 ms
(`stream`), and notes, on `time.monotonic()`, when its client hangs up. A run is started
through the official SDK (`OpenAIModel`, `AnthropicModel`), and once the request has arrived
(and, streaming, three tokens have gone out) it is cancelled:

- `token`: `CancellationToken.cancel()` in the driving process;
- `request`: `operations.cancel(store, …)`, what `eudaimon runs cancel` and `POST …/cancel` do
  for a run another process drives: a request in the store, seen by the driver's poll.

Reported per case, over `--tries` runs: the time from the cancel to the server seeing the
connection close (`wire`), and to `prompt` returning the cancelled run (`run`), p50 and p99
(with 20 tries, p99 is the slowest).

    .venv/bin/python benchmarks/cancel_latency.py [--tries 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "providers"))

from _slow_server import SlowProvider, Wire  # noqa: E402

from eudaimon import Agent, CancellationToken  # noqa: E402
from eudaimon.errors import Cancelled  # noqa: E402
from eudaimon.models import Model  # noqa: E402
from eudaimon.models.anthropic import AnthropicModel  # noqa: E402
from eudaimon.models.openai import OpenAIModel  # noqa: E402
from eudaimon.runtime import operations  # noqa: E402
from eudaimon.stores import MemoryStore  # noqa: E402


def _model(server: SlowProvider) -> Model:
    if server.wire == "openai":
        return OpenAIModel("gpt-slow", api_key="sk-bench", base_url=server.url)
    return AnthropicModel("claude-slow", api_key="sk-ant-bench", base_url=server.url)


async def _drive(agent: Agent[Any, Any], run_id: str, stream: bool, token: CancellationToken | None) -> str:
    if stream:
        status = ""
        async for event in agent.prompt_stream("write", run_id=run_id, cancel=token):
            status = getattr(event, "status", status)
        return status
    try:
        return (await agent.prompt("write", run_id=run_id, cancel=token)).status.value
    except Cancelled:
        return "cancelled"


async def _one(server: SlowProvider, agent: Agent[Any, Any], n: int, stream: bool, how: str) -> tuple[float, float]:
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


def _ms(values: list[float]) -> str:
    ordered = sorted(v * 1000 for v in values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):8.1f} ms  p99 {p99:8.1f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    args = parser.parse_args()
    cases: list[tuple[Wire, bool, str]] = [
        (wire, stream, how)
        for how in ("token", "request")
        for wire in ("openai", "anthropic")
        for stream in (False, True)
    ]
    print(f"cancel -> connection closed, {args.tries} tries each (python {sys.version.split()[0]})")
    for wire, stream, how in cases:
        server = SlowProvider(wire)
        agent = Agent(_model(server), store=MemoryStore(), memory=None)
        try:
            wire_s, run_s = [], []
            for n in range(args.tries):
                closed, returned = await _one(server, agent, n, stream, how)
                wire_s.append(closed)
                run_s.append(returned)
        finally:
            await agent.aclose()
            server.close()
        label = f"{wire:9} {'stream' if stream else 'generate':8} {how:7}"
        print(f"{label}  wire: {_ms(wire_s)}   run: {_ms(run_s)}")


if __name__ == "__main__":
    asyncio.run(main())
