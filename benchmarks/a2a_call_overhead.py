"""What calling an agent over A2A costs, against calling it locally with `agent.as_tool()`.

Three parent agents run the same K-step loop (K-1 model turns that each call one tool, then a
final answer), played by zero-latency models, each parent on its own `MemoryStore`:

- inline: a tool that returns a fixed answer (the floor: what a delegated call replaces);
- local: `helper.as_tool()`, each call a child run of one model turn in the parent's store;
- a2a: `A2AAgent(url)`, each call an A2A message to the same helper served by a real
  `uvicorn` server in a subprocess (`create_app(helper, a2a=True)`, its own `MemoryStore`):
  card fetched once, then per call a streamed `SendMessage`, the run, and a `GetTask`.

Repeats alternate the variants so drift hits all alike. Reported: each variant's median µs per
step, the µs a call adds above inline, and the ratio a2a/local of those per-call costs.

    .venv/bin/python benchmarks/a2a_call_overhead.py [--k 20] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.a2a import A2AAgent
from eudaimon.models import ChatRequest, FunctionModel, ScriptedModel
from eudaimon.stores import MemoryStore


@tool(effect="read")
async def ask(input: str) -> str:
    """Answer at once."""
    return "answer"


def _helper(store: MemoryStore | str) -> Agent:
    def answer(request: ChatRequest) -> str:
        return "answer"

    return Agent(FunctionModel(answer, "helper-model"), name="helper", store=store, memory=None)


def _script(k: int, name: str) -> list[Message | str]:
    turns: list[Message | str] = [
        Message.assistant(None, [ToolCall(f"c{i}", name, {"input": "q"})]) for i in range(k - 1)
    ]
    return [*turns, "done"]


def serve(port: int) -> None:
    """The A2A side: the helper on a real uvicorn server (run as `--serve PORT`)."""
    import uvicorn

    from eudaimon.server import create_app

    app = create_app(_helper("memory:"), a2a=True, recover=False)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    source = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return process, url + "/a2a/helper"
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    process.kill()
    raise SystemExit("the A2A server did not start")


async def _one(make: Callable[[], Agent], k: int, thread: str) -> float:
    agent = make()
    started = time.perf_counter()
    response = await agent.prompt("go", thread_id=thread)
    elapsed = time.perf_counter() - started
    assert response.status == "completed", (response.status, response.messages[-2:])
    return elapsed / k * 1e6


async def main(k: int, repeats: int) -> None:
    process, url = _start_server()
    try:
        remote = A2AAgent(url, name="helper")
        helper_store = MemoryStore()

        def inline() -> Agent:
            return Agent(ScriptedModel(_script(k, "ask")), tools=[ask], store=MemoryStore(), max_iterations=k)

        def local() -> Agent:
            tool = _helper(helper_store).as_tool()
            return Agent(ScriptedModel(_script(k, "helper")), tools=[tool], store=MemoryStore(), max_iterations=k)

        def a2a() -> Agent:
            return Agent(ScriptedModel(_script(k, "helper")), tools=[remote], store=MemoryStore(), max_iterations=k)

        variants = {"inline": inline, "local": local, "a2a": a2a}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for repeat in range(repeats + 1):
            for name, make in variants.items():
                value = await _one(make, k, f"bench-{name}-{repeat}")
                if repeat:  # the first round warms up (and fetches the card)
                    times[name].append(value)
    finally:
        process.terminate()
        process.wait(10)
    median = {name: statistics.median(values) for name, values in times.items()}
    per_call = {name: (median[name] - median["inline"]) * k / (k - 1) for name in ("local", "a2a")}
    print(f"K={k}, {repeats} repeats, Python {platform.python_version()}, {platform.machine()}")
    print(f"{'variant':<8} {'µs/step (median)':>18} {'best':>10} {'µs/call above inline':>22}")
    for name in variants:
        extra = f"{per_call[name]:>22.0f}" if name in per_call else f"{'–':>22}"
        print(f"{name:<8} {median[name]:>18.1f} {min(times[name]):>10.1f} {extra}")
    print(f"a2a call / local as_tool() call = {per_call['a2a'] / per_call['local']:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    else:
        asyncio.run(main(args.k, args.repeats))
