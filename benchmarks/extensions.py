"""What hooks, middleware and guardrails add to a step, against the bare loop.

Two agents run the same K-step tool loop (K-1 model turns that each call one async READ tool,
then an answer) on a zero-latency `ScriptedModel` into a `MemoryStore`: bare, and extended with
one hook overriding all six methods with no-ops, one pass-through middleware overriding all
three, and one output guardrail answering `Pass()`. Rounds alternate them (the first rotating),
each run on a thread of its own after `gc.collect()`; figures are medians of wall time / K.

Target: extended ≤ 1.5 × bare.
"""

from __future__ import annotations

from typing import Any

import _harness as h

ROUNDS = 1


def extensions() -> dict[str, Any]:
    from eudaimon import ToolCall
    from eudaimon.guardrails import OutputGuardrail, Pass
    from eudaimon.hooks import AgentHook, LoopState, ToolOutput
    from eudaimon.middleware import Middleware, ToolCallRequest
    from eudaimon.models import ChatRequest, ChatResponse

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

    return {"hooks": NoOpHook(), "middleware": PassThrough(), "output_guardrails": [AlwaysPass()]}


def measure(quick: bool) -> dict[str, Any]:
    k, rounds = (50, 3) if quick else (200, 21)

    def run(extended: bool) -> Any:
        """The run's coroutine, its agent built (on the run's own thread, before the timing)."""
        from eudaimon.stores import MemoryStore

        agent = h.loop_agent(k, store=MemoryStore(), **(extensions() if extended else {}))
        return agent.prompt("go")

    sides = {"bare": False, "1 hook + 1 middleware + 1 guardrail": True}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(rounds + 1):
        for name in h.rotate(list(sides), r):
            seconds, response = h.timed_on_thread(lambda e=sides[name]: run(e))
            h.checked(response, k)
            if r:  # the first round warms up
                times[name].append(seconds / k * 1e6)
    return {f"{name} µs/step": h.median(values) for name, values in times.items()}


def targets(f: dict[str, Any]) -> list[h.Target]:
    bare, extended = f["bare µs/step"], f["1 hook + 1 middleware + 1 guardrail µs/step"]
    return [h.Target("extended step ≤ 1.5 × the bare step", extended / bare, 1.5, f"{extended:.0f} ÷ {bare:.0f} µs")]
