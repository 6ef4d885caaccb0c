"""What reaching tools through MCP, and other agents through child runs, costs a step.

Four agents run the same K-step loop (K-1 model turns that each call one tool, then a final
answer) played by zero-latency `ScriptedModel`s into a `MemoryStore`:

- local: an async READ tool `echo(i)` in the process;
- mcp: the same `echo` served by an MCP server over stdio (`_echo_mcp_server.py`; the
  connection is opened before timing, as an agent does before its first run);
- inline: a tool that returns a fixed answer (what an agent tool replaces);
- child: `helper.as_tool()`, each call a child run of one model turn, journaled in the same store.

Repeats alternate the variants so drift hits all alike; each run has its own thread. Reported:
each variant's median µs per step, and the ratios mcp/local and child/inline.

    .venv/bin/python benchmarks/delegation_overhead.py [--k 50] [--repeats 7]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.mcp import MCPTools
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore

SERVER = str(Path(__file__).with_name("_echo_mcp_server.py"))


@tool(effect="read")
async def echo(i: int) -> int:
    """Return `i`."""
    return i


@tool(effect="read")
async def ask(input: str) -> str:
    """Answer at once."""
    return "answer"


def _script(k: int, name: str, arguments: Callable[[int], dict[str, object]]) -> list[Message | str]:
    turns: list[Message | str] = [
        Message.assistant(None, [ToolCall(f"c{i}", name, arguments(i))]) for i in range(k - 1)
    ]
    return [*turns, "done"]


async def _one(make: Callable[[], Agent], k: int, thread: str) -> float:
    agent = make()
    started = time.perf_counter()
    response = await agent.prompt("go", thread_id=thread)
    elapsed = time.perf_counter() - started
    assert response.status == "completed", response.status
    return elapsed / k * 1e6


async def main(k: int, repeats: int) -> None:
    mcp = MCPTools(command=[sys.executable, SERVER], trusted=True)
    await mcp.list_tools()  # connect before timing, as an agent does before its first run
    helper_store = MemoryStore()

    def local() -> Agent:
        return Agent(
            ScriptedModel(_script(k, "echo", lambda i: {"i": i})), tools=[echo], store=MemoryStore(), max_iterations=k
        )

    def via_mcp() -> Agent:
        return Agent(
            ScriptedModel(_script(k, "echo", lambda i: {"i": i})), tools=[mcp], store=MemoryStore(), max_iterations=k
        )

    def inline() -> Agent:
        return Agent(
            ScriptedModel(_script(k, "ask", lambda i: {"input": "q"})),
            tools=[ask],
            store=MemoryStore(),
            max_iterations=k,
        )

    def child() -> Agent:
        helper = Agent(ScriptedModel(["answer"] * k), name="helper", store=helper_store)
        return Agent(
            ScriptedModel(_script(k, "helper", lambda i: {"input": "q"})),
            tools=[helper.as_tool()],
            store=MemoryStore(),
            max_iterations=k,
        )

    variants = {"local": local, "mcp": via_mcp, "inline": inline, "child": child}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for repeat in range(repeats + 1):
        for name, make in variants.items():
            value = await _one(make, k, f"bench-{name}-{repeat}")
            if repeat:  # the first round warms up
                times[name].append(value)
    await mcp.aclose()
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"K={k}, {repeats} repeats, Python {platform.python_version()}, {platform.machine()}")
    print(f"{'variant':<8} {'µs/step (median)':>18} {'best':>10}")
    for name in variants:
        print(f"{name:<8} {median[name]:>18.1f} {min(times[name]):>10.1f}")
    print(f"mcp / local   = {median['mcp'] / median['local']:.1f}x")
    print(f"child / inline = {median['child'] / median['inline']:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.k, args.repeats))
