"""What hooks, middleware and guardrails add to an agent step, measured against the bare loop.

Two agents run the same K-step tool loop (K-1 model turns that each call one async READ tool,
then a final answer) played by a zero-latency `ScriptedModel` into a `MemoryStore`:

- bare: no extensions;
- extended: one hook overriding all six methods with no-ops, one pass-through middleware
  overriding all three methods, one output guardrail answering `Pass()`.

Repeats alternate bare / extended so that drift (CPU frequency, GC, other processes) hits both
alike; the figure is each side's median wall time / K, in µs per step, and their ratio.
Target (issue 3): extended ≤ 1.5 × bare.

    .venv/bin/python benchmarks/extensions_overhead.py [--k 200] [--repeats 21]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import time
from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.guardrails import OutputGuardrail, Pass
from eudaimon.hooks import AgentHook, LoopState, ToolOutput
from eudaimon.middleware import Middleware, ToolCallRequest
from eudaimon.models import ChatRequest, ChatResponse, ScriptedModel
from eudaimon.stores import MemoryStore

TARGET_RATIO = 1.5


@tool(effect="read")
async def echo(i: int) -> int:
    """Return `i`.

    Args:
        i: Any integer.
    """
    return i


class NoOpHook(AgentHook):
    """Overrides every hook method, doing nothing: the dispatch cost alone."""

    def on_iteration_start(self, state: LoopState) -> None:
        pass

    def on_model_response(self, response: ChatResponse) -> None:
        pass

    def on_tool_call(self, call: ToolCall) -> None:
        pass

    def on_tool_result(self, call: ToolCall, result: ToolOutput) -> None:
        pass

    def on_iteration_end(self, state: LoopState) -> None:
        pass

    def on_error(self, error: BaseException) -> None:
        pass


class PassThrough(Middleware):
    """Overrides every middleware method and lets everything through unchanged."""

    def on_request(self, request: ChatRequest) -> None:
        return None

    def on_response(self, response: ChatResponse) -> None:
        return None

    def on_tool_call(self, call: ToolCallRequest) -> None:
        return None


class AlwaysPass(OutputGuardrail):
    def check(self, text: str) -> Any:
        return Pass()


def script(k: int) -> list[Message | str]:
    turns: list[Message | str] = [
        Message.assistant(tool_calls=[ToolCall(f"call_{i}", "echo", {"i": i})]) for i in range(k - 1)
    ]
    return [*turns, "done"]


def make_agent(k: int, extended: bool) -> Agent:
    options: dict[str, Any] = {}
    if extended:
        options = {"hooks": NoOpHook(), "middleware": PassThrough(), "output_guardrails": [AlwaysPass()]}
    return Agent(ScriptedModel(script(k)), tools=[echo], store=MemoryStore(), max_iterations=k + 1, **options)


async def one_run(k: int, extended: bool) -> float:
    agent = make_agent(k, extended)
    start = time.perf_counter()
    response = await agent.prompt("go")
    elapsed = time.perf_counter() - start
    if response.status != "completed" or response.iterations != k:
        raise RuntimeError(f"K={k}: run ended {response.status} after {response.iterations} steps")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=200, help="steps per run")
    parser.add_argument("--repeats", type=int, default=21, help="runs per side (alternating)")
    args = parser.parse_args()

    for extended in (False, True):  # warm-up: imports, schema compilation, first-call caches
        asyncio.run(one_run(args.k, extended))
    bare: list[float] = []
    extended: list[float] = []
    for _ in range(args.repeats):
        bare.append(asyncio.run(one_run(args.k, False)))
        extended.append(asyncio.run(one_run(args.k, True)))

    bare_us = statistics.median(bare) / args.k * 1e6
    ext_us = statistics.median(extended) / args.k * 1e6
    ratio = ext_us / bare_us
    print(f"python {platform.python_version()} on {platform.machine()}; K={args.k}, {args.repeats} repeats per side")
    print(f"bare loop:                          {bare_us:8.1f} µs/step")
    print(f"1 hook + 1 middleware + 1 guardrail: {ext_us:8.1f} µs/step  (+{ext_us - bare_us:.1f} µs)")
    verdict = "OK" if ratio <= TARGET_RATIO else "MISSED"
    print(f"ratio: {ratio:.3f}x (target ≤ {TARGET_RATIO}x) {verdict}")


if __name__ == "__main__":
    main()
